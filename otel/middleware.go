package celerisotel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.38.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/celeris-dev/celeris"
)

// DurationBuckets are the explicit bucket boundaries, in seconds, of
// http.server.request.duration: the ones the HTTP semantic conventions
// advise.
var DurationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// server is one Middleware's tracer, propagator and instruments.
type server struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	filter func(*celeris.Context) bool
	names  spanNames
	sets   seriesSets
	// activeOpts are the attributes of http.server.active_requests, by
	// method slot and b2i(https).
	activeOpts [len(methodSlots)][2][]metric.AddOption
	// startOpts are the span start options, built once: a variadic
	// argument built per call would be allocated per request.
	startOpts []trace.SpanStartOption
	duration  metric.Float64Histogram
	active    metric.Int64UpDownCounter
	reqSize   metric.Int64Histogram
	respSize  metric.Int64Histogram
}

// Middleware returns middleware that makes a server span and records the HTTP
// server metrics for every request, as the package doc describes. Use it with
// Server.Use, inside recovery; it needs no route of its own.
func Middleware(opts ...Option) celeris.MiddlewareFunc {
	cfg := newConfig(opts)
	s := &server{
		tracer:    cfg.TracerProvider.Tracer(scopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:      cfg.Propagators,
		filter:    cfg.Filter,
		startOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)},
	}
	for i, m := range methodSlots {
		for j, sch := range schemes {
			s.activeOpts[i][j] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
				semconv.HTTPRequestMethodKey.String(m), semconv.URLSchemeKey.String(sch)))}
		}
	}
	meter := cfg.MeterProvider.Meter(scopeName, metric.WithSchemaURL(semconv.SchemaURL))
	var err error
	// An instrument that cannot be made is reported to otel's error handler
	// once; the SDK still returns a working instrument, and a provider that
	// returns none gets a no-op one.
	if s.duration, err = meter.Float64Histogram("http.server.request.duration",
		metric.WithUnit("s"),
		metric.WithDescription("Duration of HTTP server requests."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...)); err != nil {
		otel.Handle(err)
	}
	if s.active, err = meter.Int64UpDownCounter("http.server.active_requests",
		metric.WithUnit("{request}"),
		metric.WithDescription("Number of active HTTP server requests.")); err != nil {
		otel.Handle(err)
	}
	if s.reqSize, err = meter.Int64Histogram("http.server.request.body.size",
		metric.WithUnit("By"),
		metric.WithDescription("Size of HTTP server request bodies.")); err != nil {
		otel.Handle(err)
	}
	if s.respSize, err = meter.Int64Histogram("http.server.response.body.size",
		metric.WithUnit("By"),
		metric.WithDescription("Size of HTTP server response bodies.")); err != nil {
		otel.Handle(err)
	}
	var noop metricnoop.Meter
	if s.duration == nil {
		s.duration, _ = noop.Float64Histogram("")
	}
	if s.active == nil {
		s.active, _ = noop.Int64UpDownCounter("")
	}
	if s.reqSize == nil {
		s.reqSize, _ = noop.Int64Histogram("")
	}
	if s.respSize == nil {
		s.respSize, _ = noop.Int64Histogram("")
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error { return s.serve(c, next) }
	}
}

// serve runs one request inside its span. Attributes are computed only for
// a span that records, and metric attributes only for enabled instruments,
// from sets cached per route, method and status: with a sampler that drops
// the request and no meter, the cost is the propagator's look-ups, the span
// start (IDs and sampling decision) and one context.
func (s *server) serve(c *celeris.Context, next celeris.HandlerFunc) error {
	if s.filter != nil && !s.filter(c) {
		return next(c)
	}
	slot := methodSlot(c.Method())
	route := c.RoutePattern()
	ctx := s.prop.Extract(c.Context(), carrier{c})
	ctx, span := s.tracer.Start(ctx, s.names.name(slot, route), s.startOpts...)
	c.SetContext(ctx) // handlers' spans are children of this one
	https := c.Scheme() == "https"
	r := request{c: c, span: span, recording: span.IsRecording(), slot: uint8(slot), https: https, route: route}
	if r.recording {
		var buf [14]attribute.KeyValue
		span.SetAttributes(spanAttrs(buf[:0], c, methodSlots[slot], slot != otherSlot, route, schemes[b2i(https)])...)
	}
	if s.duration.Enabled(ctx) {
		r.start = time.Now() // the span keeps its own times
	}
	if s.active.Enabled(ctx) {
		r.active = true
		s.active.Add(ctx, 1, s.activeOpts[slot][b2i(https)]...)
	}
	done := false
	defer func() {
		if !done { // the handler panicked: recovery answers 500
			s.end(ctx, &r, 500, nil)
		}
	}()
	err := next(c)
	c.Error(err) // the error handler answers now: record the status sent
	done = true
	s.end(ctx, &r, c.ResultStatus(err), err)
	return err
}

// schemes are the values of url.scheme, by b2i(https).
var schemes = [2]string{"http", "https"}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// request is what end needs of a request that serve started.
type request struct {
	c         *celeris.Context
	span      trace.Span
	recording bool
	active    bool  // http.server.active_requests counted it
	slot      uint8 // the method's index in methodSlots
	https     bool
	route     string // the pattern: the router's string, not the request's
	start     time.Time
}

// end records the request's metrics, then sets the span's outcome and ends
// it: once the span has ended, every measurement of the request is made.
func (s *server) end(ctx context.Context, r *request, status int, err error) {
	if r.active {
		s.active.Add(context.WithoutCancel(ctx), -1, s.activeOpts[r.slot][b2i(r.https)]...)
	}
	s.record(ctx, r, status)
	if r.recording {
		r.span.SetAttributes(semconv.HTTPResponseStatusCodeKey.Int(status))
		if status >= 500 {
			// A 5xx is the server's failure; a 4xx is the client's and
			// leaves a server span's status unset (semconv HTTP spans).
			r.span.SetAttributes(semconv.ErrorTypeKey.String(statusString(status)))
			desc := ""
			if err != nil {
				desc = err.Error()
			}
			r.span.SetStatus(codes.Error, desc)
		}
	}
	r.span.End()
}

// record records the duration and body sizes, when an instrument is enabled.
func (s *server) record(ctx context.Context, r *request, status int) {
	dur, req, resp := s.duration.Enabled(ctx), s.reqSize.Enabled(ctx), s.respSize.Enabled(ctx)
	if !dur && !req && !resp {
		return
	}
	ctx = context.WithoutCancel(ctx) // the request's context may be cancelled already
	c := r.c
	opt := s.sets.get(seriesKey{route: r.route, status: status, slot: r.slot, https: r.https, proto: protoVersion(c.Proto())})
	if dur && !r.start.IsZero() {
		s.duration.Record(ctx, time.Since(r.start).Seconds(), opt...)
	}
	if n := c.ContentLength(); req && n >= 0 {
		s.reqSize.Record(ctx, n, opt...)
	}
	if resp {
		s.respSize.Record(ctx, c.BytesWritten(), opt...)
	}
}
