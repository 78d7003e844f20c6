package celerisotel

import (
	"context"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.38.0"
	"go.opentelemetry.io/otel/trace"
)

// RefusalHeader returns a celeris.Config.RefusalHeader that records the answers
// the server makes without running middleware, which Middleware therefore never
// sees (HTTP/1.1 requests the parser refuses: 400, 413, 414, 417, 431, 501, 505;
// HTTP/2 requests refused on the connection; 503 when no worker is free): a
// server span named "HTTP" with http.request.method "_OTHER" (the method was
// not read, or not trusted) and http.response.status_code, and a measurement of
// http.server.request.duration with the same attributes and a duration of 0 (the
// hook is called when the answer is made, not told when the request began), so
// that dashboards built on that metric count refusals. A 5xx also carries
// error.type and an Error span status. It returns next's header (nil: none),
// such as secure.RefusalHeader's:
//
//	s := celeris.New(celeris.Config{
//		RefusalHeader: celerisotel.RefusalHeader(secure.RefusalHeader(secureCfg, nil)),
//	})
//
// It runs on the event loops: use a batching span processor (the SDK's
// BatchSpanProcessor, as otlptrace setups do), never a synchronous exporter.
// WithFilter does not apply (there is no Context); the providers are those of
// WithTracerProvider and WithMeterProvider, else the global ones.
func RefusalHeader(next func(status int) http.Header, opts ...Option) func(status int) http.Header {
	cfg := newConfig(opts)
	r := &refusals{
		tracer: cfg.TracerProvider.Tracer(scopeName, trace.WithSchemaURL(semconv.SchemaURL)),
	}
	meter := cfg.MeterProvider.Meter(scopeName, metric.WithSchemaURL(semconv.SchemaURL))
	var err error
	if r.duration, err = meter.Float64Histogram("http.server.request.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...)); err != nil {
		otel.Handle(err)
	}
	return func(status int) http.Header {
		r.record(status)
		if next == nil {
			return nil
		}
		return next(status)
	}
}

// refusals records the server's refusals.
type refusals struct {
	tracer   trace.Tracer
	duration metric.Float64Histogram // nil when the meter gave none
	sets     sync.Map                // status -> *refusalSet
}

// refusalSet is the attributes of one status, built once.
type refusalSet struct {
	kv   []attribute.KeyValue
	opts []metric.RecordOption
}

func (r *refusals) set(status int) *refusalSet {
	if v, ok := r.sets.Load(status); ok {
		return v.(*refusalSet)
	}
	kv := []attribute.KeyValue{
		semconv.HTTPRequestMethodKey.String("_OTHER"),
		semconv.HTTPResponseStatusCodeKey.Int(status),
	}
	if status >= 500 {
		kv = append(kv, semconv.ErrorTypeKey.String(statusString(status)))
	}
	s := &refusalSet{kv: kv, opts: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kv...))}}
	if status < 100 || status > 599 { // not cached: the map stays bounded
		return s
	}
	v, _ := r.sets.LoadOrStore(status, s)
	return v.(*refusalSet)
}

func (r *refusals) record(status int) {
	s := r.set(status)
	ctx := context.Background()
	now := time.Now()
	_, span := r.tracer.Start(ctx, "HTTP", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(now))
	if span.IsRecording() {
		span.SetAttributes(s.kv...)
		if status >= 500 {
			span.SetStatus(codes.Error, http.StatusText(status))
		}
	}
	span.End(trace.WithTimestamp(now))
	if r.duration != nil && r.duration.Enabled(ctx) {
		r.duration.Record(ctx, 0, s.opts...)
	}
}
