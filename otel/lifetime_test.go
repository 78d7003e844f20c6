package celerisotel_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/recovery"
	celerisotel "github.com/celeris-dev/celeris/otel"
)

// A span keeps its values after the request's buffers are reused: the
// strings taken from the request (path, user agent, host, tracestate) are
// copies. Later requests on the same connection, of the same lengths, would
// overwrite borrowed ones.
func TestSpanValuesOutliveRequest(t *testing.T) {
	for _, p := range protos {
		t.Run(p.name, func(t *testing.T) {
			tm := newTelemetry(t)
			s := newServer()
			s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tm.tp), celerisotel.WithMeterProvider(tm.mp)))
			s.GET("/items/:id", func(c *celeris.Context) error { return c.String(200, "ok") })
			addr := start(t, s)
			client := p.client()
			defer client.CloseIdleConnections()
			send := func(fill byte) {
				id := strings.Repeat(string(fill), 16)
				req, _ := http.NewRequest("GET", "http://"+addr+"/items/"+id, nil)
				req.Header.Set("User-Agent", "agent-"+id)
				req.Header.Set("traceparent", traceparent)
				req.Header.Set("tracestate", "vendor="+id)
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			send('a')
			first := tm.waitSpan(t, "GET /items/:id")
			for f := byte('b'); f <= 'z'; f++ {
				send(f)
			}
			id := strings.Repeat("a", 16)
			wantAttrs(t, "first span, after 25 more requests", attrs(first.Attributes()), map[string]any{
				"url.path":            "/items/" + id,
				"user_agent.original": "agent-" + id,
				"server.address":      "127.0.0.1",
			})
			if ts := first.SpanContext().TraceState().String(); ts != "vendor="+id {
				t.Errorf("tracestate %q, want vendor=%s", ts, id)
			}
		})
	}
}

// A panicking handler: the span records the 500 the recovery middleware
// answers, in error, and the request leaves the active count.
func TestPanicRecorded(t *testing.T) {
	tm := newTelemetry(t)
	s := newServer()
	s.Use(recovery.New(recovery.Config{}), celerisotel.Middleware(celerisotel.WithTracerProvider(tm.tp), celerisotel.WithMeterProvider(tm.mp)))
	s.GET("/boom", func(c *celeris.Context) error { panic("boom") })
	addr := start(t, s)
	resp, err := protos[0].client().Get("http://" + addr + "/boom")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	sp := tm.waitSpan(t, "GET /boom")
	if sp.Status().Code != codes.Error || attrs(sp.Attributes())["http.response.status_code"] != int64(500) {
		t.Errorf("status %v attributes %v", sp.Status(), sp.Attributes())
	}
	active := tm.metrics(t)["http.server.active_requests"].(metricdata.Sum[int64])
	if len(active.DataPoints) != 1 || active.DataPoints[0].Value != 0 {
		t.Errorf("active requests after a panic: %+v", active.DataPoints)
	}
}

// WithFilter leaves the requests it refuses alone: no span, no metrics.
func TestFilter(t *testing.T) {
	tm := newTelemetry(t)
	s := newServer()
	s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tm.tp), celerisotel.WithMeterProvider(tm.mp),
		celerisotel.WithFilter(func(c *celeris.Context) bool { return c.RoutePattern() != "/healthz" })))
	s.GET("/healthz", func(c *celeris.Context) error { return c.String(200, "ok") })
	s.GET("/work", func(c *celeris.Context) error { return c.String(200, "ok") })
	addr := start(t, s)
	client := protos[0].client()
	for _, path := range []string{"/healthz", "/work"} {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	tm.waitSpan(t, "GET /work")
	for _, sp := range tm.spans.Ended() {
		if sp.Name() == "GET /healthz" {
			t.Error("a filtered request has a span")
		}
	}
	dur := tm.metrics(t)["http.server.request.duration"].(metricdata.Histogram[float64])
	if len(dur.DataPoints) != 1 {
		t.Errorf("duration points %d, want 1 (/work)", len(dur.DataPoints))
	}
}
