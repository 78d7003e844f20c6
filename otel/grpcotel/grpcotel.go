// Package grpcotel instruments the native gRPC server of
// github.com/celeris-dev/celeris/grpc with OpenTelemetry, per the RPC
// semantic conventions (semconv v1.38.0), through the server's interceptors:
//
//	srv := celerisgrpc.NewServer(
//		celerisgrpc.UnaryInterceptor(grpcotel.UnaryServerInterceptor()),
//		celerisgrpc.StreamInterceptor(grpcotel.StreamServerInterceptor()),
//	)
//
// Each RPC gets a server span named "{rpc.service}/{rpc.method}"
// ("grpc.health.v1.Health/Check") whose parent is the trace context of the
// request's metadata (traceparent, tracestate; baggage goes into the context),
// with rpc.system "grpc", rpc.service, rpc.method, rpc.grpc.status_code,
// server.address and server.port (from :authority) and network.peer.address
// and .port. The codes the conventions name as server errors (Unknown,
// DeadlineExceeded, Unimplemented, Internal, Unavailable, DataLoss) set the
// span's status to Error with the status message; others leave it unset.
// The handler's context carries the span: spans it starts are children.
// The rpc.server.duration histogram (milliseconds) records every RPC with
// rpc.system, rpc.service, rpc.method and rpc.grpc.status_code.
//
// An RPC to a method no service registered gets a span only when the server
// has an UnknownServiceHandler (it runs through the stream interceptor): its
// name and rpc.method are "_OTHER", with the path in rpc.method_original, so
// that a client's made-up names do not make span names and metric series
// unbounded. The interceptors see what interceptors see: an RPC refused before
// its handler (an unknown method without that handler, a bad grpc-timeout or
// grpc-encoding) gets no span here (an HTTP span from celerisotel's middleware
// on the route covers those), and a unary reply that fails to encode after the
// handler returned is recorded with the handler's status.
// The options are celerisotel's (providers and propagators; WithFilter does
// not apply).
package grpcotel

import (
	"context"
	"net"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.38.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	celerisotel "github.com/celeris-dev/celeris/otel"
	"github.com/celeris-dev/celeris/otel/internal/otelcfg"
)

// DurationBuckets are the bucket boundaries, in milliseconds, of
// rpc.server.duration.
var DurationBuckets = []float64{0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000}

// instr is the tracer, propagator and instrument the interceptors share.
type instr struct {
	tracer    trace.Tracer
	prop      propagation.TextMapPropagator
	duration  metric.Float64Histogram
	startOpts []trace.SpanStartOption
}

func newInstr(opts []celerisotel.Option) *instr {
	var cfg otelcfg.Config
	for _, o := range opts {
		o(&cfg)
	}
	cfg.Fill()
	in := &instr{
		tracer:    cfg.TracerProvider.Tracer(otelcfg.ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		prop:      cfg.Propagators,
		startOpts: []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)},
	}
	meter := cfg.MeterProvider.Meter(otelcfg.ScopeName, metric.WithSchemaURL(semconv.SchemaURL))
	var err error
	if in.duration, err = meter.Float64Histogram("rpc.server.duration",
		metric.WithUnit("ms"),
		metric.WithDescription("Duration of inbound RPCs."),
		metric.WithExplicitBucketBoundaries(DurationBuckets...)); err != nil {
		otel.Handle(err) // the SDK still returns a working instrument
	}
	if in.duration == nil { // a provider that returns none
		in.duration, _ = metricnoop.Meter{}.Float64Histogram("")
	}
	return in
}

// UnaryServerInterceptor returns the interceptor that instruments unary RPCs
// (celerisgrpc.UnaryInterceptor; grpc.ChainUnaryInterceptor combines it with
// others).
func UnaryServerInterceptor(opts ...celerisotel.Option) grpc.UnaryServerInterceptor {
	in := newInstr(opts)
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		ctx, r := in.start(ctx, info.FullMethod, true) // unknown methods have no unary handler
		done := false
		defer func() {
			if !done { // the handler panicked: the server answers Internal
				in.end(ctx, r, status.New(codes.Internal, "grpc: the handler panicked"))
			}
		}()
		resp, err := h(ctx, req)
		done = true
		in.end(ctx, r, status.Convert(err))
		return resp, err
	}
}

// StreamServerInterceptor returns the interceptor that instruments
// streaming RPCs (celerisgrpc.StreamInterceptor). The handler's stream
// returns the span's context from Context.
func StreamServerInterceptor(opts ...celerisotel.Option) grpc.StreamServerInterceptor {
	in := newInstr(opts)
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		// The unknown-service handler runs without an implementation
		// (celerisgrpc and grpc-go pass srv nil); a registered service has one.
		ctx, r := in.start(ss.Context(), info.FullMethod, srv != nil)
		done := false
		defer func() {
			if !done {
				in.end(ctx, r, status.New(codes.Internal, "grpc: the handler panicked"))
			}
		}()
		err := h(srv, &stream{ServerStream: ss, ctx: ctx})
		done = true
		in.end(ctx, r, status.Convert(err))
		return err
	}
}

// stream is a ServerStream whose context carries the RPC's span.
type stream struct {
	grpc.ServerStream
	ctx context.Context
}

// Context returns the context with the RPC's span.
func (s *stream) Context() context.Context { return s.ctx }

// rpc is one RPC that start began.
type rpc struct {
	span            trace.Span
	service, method string
	start           time.Time
}

// start extracts the caller's trace context and starts the RPC's span.
func (in *instr) start(ctx context.Context, full string, known bool) (context.Context, *rpc) {
	r := &rpc{start: time.Now()}
	name := otherMethod
	if known {
		r.service, r.method = split(full)
		name = strings.TrimPrefix(full, "/")
	} else {
		r.method = otherMethod
	}
	md, _ := metadata.FromIncomingContext(ctx)
	ctx = in.prop.Extract(ctx, mdCarrier(md))
	ctx, r.span = in.tracer.Start(ctx, name, in.startOpts...)
	if r.span.IsRecording() {
		kv := []attribute.KeyValue{semconv.RPCSystemGRPC, semconv.RPCMethodKey.String(r.method)}
		if known {
			kv = append(kv, semconv.RPCServiceKey.String(r.service))
		} else {
			// The request's :path, borrowed: the span keeps a copy.
			kv = append(kv, methodOriginalKey.String(strings.Clone(full)))
		}
		if a := md.Get(":authority"); len(a) > 0 {
			host, port := splitHostPort(a[0])
			kv = append(kv, semconv.ServerAddressKey.String(host))
			if port > 0 {
				kv = append(kv, semconv.ServerPortKey.Int(port))
			}
		}
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			if host, port := splitHostPort(p.Addr.String()); host != "" {
				kv = append(kv, semconv.NetworkPeerAddressKey.String(host), semconv.NetworkPeerPortKey.Int(port))
			}
		}
		r.span.SetAttributes(kv...)
	}
	return ctx, r
}

// otherMethod is rpc.method, and the span's name, of an RPC to a method no
// service registered (served by the unknown-service handler): the request's
// :path would make span names and metric series unbounded. The path goes in
// rpc.method_original, on the span only.
const otherMethod = "_OTHER"

// methodOriginalKey is the attribute of an unknown method's full name.
const methodOriginalKey = attribute.Key("rpc.method_original")

// end records the RPC's outcome and duration and ends its span.
func (in *instr) end(ctx context.Context, r *rpc, st *status.Status) {
	code := st.Code()
	if in.duration.Enabled(ctx) {
		in.duration.Record(context.WithoutCancel(ctx), float64(time.Since(r.start))/float64(time.Millisecond),
			metric.WithAttributes(rpcAttrs(r, code)...))
	}
	if r.span.IsRecording() {
		r.span.SetAttributes(semconv.RPCGRPCStatusCodeKey.Int(int(code)))
		if serverError(code) {
			r.span.SetStatus(otelcodes.Error, st.Message())
		}
	}
	r.span.End()
}

// rpcAttrs returns the attributes of r's duration: rpc.system, rpc.service
// (absent for an unknown method), rpc.method and rpc.grpc.status_code.
func rpcAttrs(r *rpc, code codes.Code) []attribute.KeyValue {
	kv := make([]attribute.KeyValue, 0, 4)
	kv = append(kv, semconv.RPCSystemGRPC, semconv.RPCMethodKey.String(r.method), semconv.RPCGRPCStatusCodeKey.Int(int(code)))
	if r.service != "" {
		kv = append(kv, semconv.RPCServiceKey.String(r.service))
	}
	return kv
}

// serverError reports whether code is a server error for the RPC semantic
// conventions (gRPC server spans).
func serverError(code codes.Code) bool {
	switch code {
	case codes.Unknown, codes.DeadlineExceeded, codes.Unimplemented, codes.Internal, codes.Unavailable, codes.DataLoss:
		return true
	}
	return false
}

// split splits "/pkg.Service/Method" into rpc.service and rpc.method. full
// is a registered method's name (generated code's constant, or the server's
// copy), which lives as long as the server: the parts are kept as they are.
func split(full string) (service, method string) {
	full = strings.TrimPrefix(full, "/")
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return full, ""
}

// splitHostPort splits an authority or an address; the port is 0 when
// absent or malformed.
func splitHostPort(s string) (string, int) {
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		return s, 0
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return h, 0
	}
	return h, n
}

// mdCarrier reads and writes gRPC metadata for a propagator. Incoming
// metadata holds copies of the request's values (celerisgrpc copies them).
type mdCarrier metadata.MD

// Get returns the first value of key.
func (m mdCarrier) Get(key string) string {
	if v := metadata.MD(m).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set sets key to value.
func (m mdCarrier) Set(key, value string) { metadata.MD(m).Set(key, value) }

// Keys returns the metadata's keys.
func (m mdCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
