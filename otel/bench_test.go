package celerisotel_test

import (
	"context"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	celerisotel "github.com/celeris-dev/celeris/otel"
)

// BenchmarkMiddleware is one GET through a whole server (routing, chain,
// response) without a network: without the middleware, with it under a
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
			req := celeristest.NewRequest("GET", "/users/42", nil).WithHeader("User-Agent", "bench")
			if r := celeristest.Do(s, req); r.Status != 200 {
				b.Fatal(r.Status)
			}
			b.ReportAllocs()
			for b.Loop() {
				celeristest.Do(s, req)
			}
		})
	}
}
