// Package otelcfg holds the configuration that celerisotel's options fill and
// that both celerisotel and grpcotel read, so that one option set serves both.
package otelcfg

import (
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/celeris-dev/celeris"
)

// ScopeName is the instrumentation scope of every tracer and meter this
// module creates.
const ScopeName = "github.com/celeris-dev/celeris/otel"

// Config is what the options set. Zero fields mean the defaults New fills in.
type Config struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Propagators    propagation.TextMapPropagator
	// Filter, when set, decides per request whether the HTTP middleware
	// instruments it (false: the request runs without span or metrics).
	Filter func(c *celeris.Context) bool
}

// W3C is the default propagator: W3C trace-context and baggage.
var W3C propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(
	propagation.TraceContext{}, propagation.Baggage{})

// Fill sets the defaults: the global tracer and meter providers (they
// delegate to whatever otel.SetTracerProvider and otel.SetMeterProvider set,
// before or after) and W3C.
func (c *Config) Fill() {
	if c.TracerProvider == nil {
		c.TracerProvider = otel.GetTracerProvider()
	}
	if c.MeterProvider == nil {
		c.MeterProvider = otel.GetMeterProvider()
	}
	if c.Propagators == nil {
		c.Propagators = W3C
	}
}
