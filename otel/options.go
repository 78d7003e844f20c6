package celerisotel

import (
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/otel/internal/otelcfg"
)

// Option configures Middleware, WebSocket, Inject, Transport and the gRPC
// interceptors of package grpcotel.
type Option func(*otelcfg.Config)

// WithTracerProvider sets the provider of the tracer that makes the spans
// [otel.GetTracerProvider()].
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *otelcfg.Config) { c.TracerProvider = tp }
}

// WithMeterProvider sets the provider of the meter that makes the instruments
// [otel.GetMeterProvider()].
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *otelcfg.Config) { c.MeterProvider = mp }
}

// WithPropagators sets how trace context and baggage are read from requests
// and written to outgoing ones [W3C trace-context and baggage:
// propagation.TraceContext and propagation.Baggage, whatever the global
// propagator is; pass otel.GetTextMapPropagator() to use the global one].
func WithPropagators(p propagation.TextMapPropagator) Option {
	return func(c *otelcfg.Config) { c.Propagators = p }
}

// WithFilter sets which requests the middleware instruments: those for which
// f returns true (the others run with neither span nor metrics; health checks,
// say). f runs after routing, so c.RoutePattern() is known [every request].
func WithFilter(f func(c *celeris.Context) bool) Option {
	return func(c *otelcfg.Config) { c.Filter = f }
}

func newConfig(opts []Option) otelcfg.Config {
	var cfg otelcfg.Config
	for _, o := range opts {
		o(&cfg)
	}
	cfg.Fill()
	return cfg
}
