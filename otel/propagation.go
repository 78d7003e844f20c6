package celerisotel

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/propagation"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/otel/internal/otelcfg"
)

// scopeName is the instrumentation scope of the tracers and meters.
const scopeName = otelcfg.ScopeName

// carrier reads a request's header fields for a propagator. The values it
// returns are copies: propagators keep substrings of them (a tracestate's
// members, baggage), and the span context outlives the request's buffers.
type carrier struct{ c *celeris.Context }

var (
	_ propagation.TextMapCarrier = carrier{}
	_ propagation.ValuesGetter   = carrier{}
)

// Get returns the first value of the field key (a copy), "" when absent.
func (h carrier) Get(key string) string {
	if v := h.c.Header(key); v != "" {
		return h.c.Clone(v)
	}
	return ""
}

// Values returns every value of the field key (copies), in order: W3C
// baggage may come in several field lines.
func (h carrier) Values(key string) []string {
	if h.c.Header(key) == "" { // the common case: absent
		return nil
	}
	var vs []string
	h.c.VisitHeaders(func(name, value string) {
		if strings.EqualFold(name, key) {
			vs = append(vs, h.c.Clone(value))
		}
	})
	return vs
}

// Set does nothing: a request's fields are read only.
func (carrier) Set(string, string) {}

// Keys returns the request's field names (copies).
func (h carrier) Keys() []string {
	var keys []string
	h.c.VisitHeaders(func(name, _ string) { keys = append(keys, h.c.Clone(name)) })
	return keys
}

// Inject writes the trace context and baggage of ctx (a handler's
// c.Context(), whose span the middleware set) into h, an outgoing request's
// header, with the propagators of opts [W3C trace-context and baggage], so
// that the service it calls continues the trace.
func Inject(ctx context.Context, h http.Header, opts ...Option) {
	cfg := newConfig(opts)
	cfg.Propagators.Inject(ctx, propagation.HeaderCarrier(h))
}

// Transport returns an http.RoundTripper that sends each request through base
// (http.DefaultTransport when nil) with the trace context and baggage of the
// request's context in its header (propagators as for Inject). The caller's
// request is not modified: a request whose context carries something to
// propagate is cloned first. It makes no client span; it carries the current
// span (the server span, or the handler's own) to the next service.
//
//	client := &http.Client{Transport: celerisotel.Transport(nil)}
//	req, _ := http.NewRequestWithContext(c.Context(), "GET", url, nil)
//	resp, err := client.Do(req)
func Transport(base http.RoundTripper, opts ...Option) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, prop: newConfig(opts).Propagators}
}

type transport struct {
	base http.RoundTripper
	prop propagation.TextMapPropagator
}

// RoundTrip implements http.RoundTripper.
func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	h := make(http.Header, 2)
	t.prop.Inject(r.Context(), propagation.HeaderCarrier(h))
	if len(h) == 0 {
		return t.base.RoundTrip(r)
	}
	r2 := r.Clone(r.Context()) // RoundTrippers must not modify the request
	if r2.Header == nil {
		r2.Header = make(http.Header, len(h))
	}
	for k, v := range h {
		r2.Header[k] = v
	}
	return t.base.RoundTrip(r2)
}
