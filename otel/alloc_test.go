//go:build !race

package celerisotel_test

import (
	"context"
	"net"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/hook"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	celerisotel "github.com/celeris-dev/celeris/otel"
)

// The allocation budget of a request the sampler drops, with a no-op meter:
// the SDK's non-recording span and the context that holds it; nothing of the
// middleware's own. The server alone allocates nothing (the core's alloc
// tests), so every allocation counted here is the instrumentation's.
func TestDroppedRequestAllocs(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	defer tp.Shutdown(context.Background())
	s := celeris.New(celeris.Config{})
	s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tp), celerisotel.WithMeterProvider(metricnoop.NewMeterProvider())))
	s.GET("/users/:id", func(c *celeris.Context) error { return c.String(200, "ok") })
	s.Handler()
	h := hook.Handler(s)
	req := &httpmsg.Request{Method: "GET", Path: "/users/42", RequestURI: "/users/42",
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: "example.com", Scheme: "http",
		Header:     []httpmsg.Field{{Name: "User-Agent", Value: "bench"}},
		RemoteAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}}
	var w discard
	serve := func() {
		req.Route = nil
		h.Prepare(req)
		h.Serve(req, &w)
	}
	serve()
	if n := testing.AllocsPerRun(1000, serve); n > 2 {
		t.Errorf("%v allocations per dropped request, want at most 2", n)
	}
}
