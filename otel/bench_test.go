package celerisotel_test

import (
	"context"
	"net"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/hook"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	celerisotel "github.com/celeris-dev/celeris/otel"
)

// BenchmarkMiddleware is one GET through a whole server (routing, chain,
// response) without a network, through the seam the protocols use (a
// request reused, a writer that discards): without the middleware, with it under a
// sampler that drops everything and a no-op meter (its floor), with the SDK
// meter added, and with every span recorded (no exporter). The middleware's
// cost is a variant's ns/op minus none's.
func BenchmarkMiddleware(b *testing.B) {
	drop := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	all := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	sdkMeter := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = drop.Shutdown(context.Background())
		_ = all.Shutdown(context.Background())
		_ = sdkMeter.Shutdown(context.Background())
	})
	for _, v := range []struct {
		name string
		mw   []celeris.MiddlewareFunc
	}{
		{name: "none"},
		{name: "never-sample,noop-meter", mw: []celeris.MiddlewareFunc{celerisotel.Middleware(
			celerisotel.WithTracerProvider(drop), celerisotel.WithMeterProvider(metricnoop.NewMeterProvider()))}},
		{name: "never-sample,sdk-meter", mw: []celeris.MiddlewareFunc{celerisotel.Middleware(
			celerisotel.WithTracerProvider(drop), celerisotel.WithMeterProvider(sdkMeter))}},
		{name: "always-sample,noop-meter", mw: []celeris.MiddlewareFunc{celerisotel.Middleware(
			celerisotel.WithTracerProvider(all), celerisotel.WithMeterProvider(metricnoop.NewMeterProvider()))}},
	} {
		b.Run(v.name, func(b *testing.B) {
			s := celeris.New(celeris.Config{})
			s.Use(v.mw...)
			s.GET("/users/:id", func(c *celeris.Context) error { return c.String(200, "ok") })
			s.Handler() // compose the chains
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
			if w.status != 200 {
				b.Fatal(w.status)
			}
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
		})
	}
}

// discard is a ResponseWriter that keeps the status only.
type discard struct{ status int }

func (d *discard) WriteResponse(status int, _ []httpmsg.Field, _ []byte) error {
	d.status = status
	return nil
}
func (d *discard) WriteHeader(status int, _ []httpmsg.Field) error {
	d.status = status
	return nil
}
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) Flush() error                { return nil }
func (d *discard) End([]httpmsg.Field) error   { return nil }
