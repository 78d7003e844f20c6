package grpcotel_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/celeris-dev/celeris"
	celerisgrpc "github.com/celeris-dev/celeris/grpc"
	celerisotel "github.com/celeris-dev/celeris/otel"
	"github.com/celeris-dev/celeris/otel/grpcotel"
)

const (
	remoteTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	remoteSpan  = "00f067aa0ba902b7"
)

// svc is a hand-written service: Echo answers with the trace ID its context
// carries (and starts a child span), Fail fails with Internal, Count streams
// three messages.
var svc = grpc.ServiceDesc{
	ServiceName: "celeris.test.Otel",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Echo", Handler: unary(func(ctx context.Context, in *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
			_, child := tracer.Start(ctx, "child")
			child.End()
			return wrapperspb.String(trace.SpanContextFromContext(ctx).TraceID().String()), nil
		})},
		{MethodName: "Fail", Handler: unary(func(context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
			return nil, status.Error(codes.Internal, "disk on fire")
		})},
		{MethodName: "Missing", Handler: unary(func(context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error) {
			return nil, status.Error(codes.NotFound, "no such thing")
		})},
	},
	Streams: []grpc.StreamDesc{{StreamName: "Count", ServerStreams: true, Handler: func(_ any, ss grpc.ServerStream) error {
		in := new(wrapperspb.StringValue)
		if err := ss.RecvMsg(in); err != nil {
			return err
		}
		id := trace.SpanContextFromContext(ss.Context()).TraceID().String()
		for i := 0; i < 3; i++ {
			if err := ss.SendMsg(wrapperspb.String(id)); err != nil {
				return err
			}
		}
		return nil
	}}},
}

var tracer trace.Tracer

func unary(f func(context.Context, *wrapperspb.StringValue) (*wrapperspb.StringValue, error)) func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
	return func(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		in := new(wrapperspb.StringValue)
		if err := dec(in); err != nil {
			return nil, err
		}
		h := func(ctx context.Context, req any) (any, error) { return f(ctx, req.(*wrapperspb.StringValue)) }
		if ic == nil {
			return h(ctx, in)
		}
		return ic(ctx, in, &grpc.UnaryServerInfo{FullMethod: "/celeris.test.Otel/" + methodOf(ctx)}, h)
	}
}

// methodOf returns the method grpc.Method reports for ctx.
func methodOf(ctx context.Context) string {
	m, _ := grpc.Method(ctx)
	return m[len("/celeris.test.Otel/"):]
}

// RPC spans and the duration histogram over a real gRPC client (grpc-go,
// h2c): names, rpc.* attributes, status codes, the caller's trace context,
// the span in the handler's context (unary and streaming).
func TestRPCSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer tp.Shutdown(context.Background())
	tracer = tp.Tracer("app")
	opts := []celerisotel.Option{celerisotel.WithTracerProvider(tp), celerisotel.WithMeterProvider(mp)}
	srv := celerisgrpc.NewServer(
		celerisgrpc.UnaryInterceptor(grpcotel.UnaryServerInterceptor(opts...)),
		celerisgrpc.StreamInterceptor(grpcotel.StreamServerInterceptor(opts...)),
	)
	srv.RegisterService(&svc, struct{}{})
	addr := serve(t, srv)
	_, port, _ := net.SplitHostPort(addr)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "traceparent", "00-"+remoteTrace+"-"+remoteSpan+"-01")

	out := new(wrapperspb.StringValue)
	if err := conn.Invoke(ctx, "/celeris.test.Otel/Echo", wrapperspb.String("x"), out); err != nil {
		t.Fatal(err)
	}
	if out.Value != remoteTrace {
		t.Errorf("handler saw trace %q, want %q", out.Value, remoteTrace)
	}
	err = conn.Invoke(ctx, "/celeris.test.Otel/Fail", wrapperspb.String("x"), out)
	if status.Code(err) != codes.Internal {
		t.Fatalf("Fail: %v", err)
	}
	err = conn.Invoke(ctx, "/celeris.test.Otel/Missing", wrapperspb.String("x"), out)
	if status.Code(err) != codes.NotFound {
		t.Fatalf("Missing: %v", err)
	}
	cs, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/celeris.test.Otel/Count")
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SendMsg(wrapperspb.String("x")); err != nil {
		t.Fatal(err)
	}
	_ = cs.CloseSend()
	n := 0
	for {
		m := new(wrapperspb.StringValue)
		if err := cs.RecvMsg(m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if m.Value != remoteTrace {
			t.Errorf("stream handler saw trace %q", m.Value)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("%d stream messages", n)
	}

	spans := map[string]sdktrace.ReadOnlySpan{}
	deadline := time.Now().Add(5 * time.Second)
	for len(spans) < 5 && time.Now().Before(deadline) {
		for _, sp := range rec.Ended() {
			spans[sp.Name()] = sp
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, tc := range []struct {
		name, method string
		code         int64
		status       otelcodes.Code
	}{
		{name: "celeris.test.Otel/Echo", method: "Echo", code: 0, status: otelcodes.Unset},
		{name: "celeris.test.Otel/Fail", method: "Fail", code: int64(codes.Internal), status: otelcodes.Error},
		{name: "celeris.test.Otel/Missing", method: "Missing", code: int64(codes.NotFound), status: otelcodes.Unset},
		{name: "celeris.test.Otel/Count", method: "Count", code: 0, status: otelcodes.Unset},
	} {
		sp, ok := spans[tc.name]
		if !ok {
			t.Errorf("no span %q (have %v)", tc.name, spans)
			continue
		}
		a := map[string]any{}
		for _, kv := range sp.Attributes() {
			a[string(kv.Key)] = kv.Value.AsInterface()
		}
		want := map[string]any{
			"rpc.system": "grpc", "rpc.service": "celeris.test.Otel", "rpc.method": tc.method,
			"rpc.grpc.status_code": tc.code, "server.address": "127.0.0.1", "server.port": mustInt(port),
			"network.peer.address": "127.0.0.1",
		}
		for k, v := range want {
			if a[k] != v {
				t.Errorf("%s: %s = %v, want %v", tc.name, k, a[k], v)
			}
		}
		if sp.SpanKind() != trace.SpanKindServer || sp.Status().Code != tc.status {
			t.Errorf("%s: kind %v status %v, want server, %v", tc.name, sp.SpanKind(), sp.Status(), tc.status)
		}
		if sp.Parent().TraceID().String() != remoteTrace || sp.Parent().SpanID().String() != remoteSpan {
			t.Errorf("%s: parent %v", tc.name, sp.Parent())
		}
	}
	if fail := spans["celeris.test.Otel/Fail"]; fail != nil && fail.Status().Description != "disk on fire" {
		t.Errorf("Fail status %+v", fail.Status())
	}
	if child, echo := spans["child"], spans["celeris.test.Otel/Echo"]; child == nil || echo == nil || child.Parent().SpanID() != echo.SpanContext().SpanID() {
		t.Errorf("the handler's span is not a child of the RPC's span")
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "rpc.server.duration" || m.Unit != "ms" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				points++
				if v, _ := dp.Attributes.Value(attribute.Key("rpc.system")); v.AsString() != "grpc" || dp.Count != 1 {
					t.Errorf("rpc.server.duration point %v count %d", dp.Attributes.ToSlice(), dp.Count)
				}
			}
		}
	}
	if points != 4 {
		t.Errorf("rpc.server.duration has %d points, want 4 (one per method)", points)
	}
}

func mustInt(s string) int64 {
	n, _ := strconv.Atoi(s)
	return int64(n)
}

// An RPC to a method no service registered, served by the unknown-service
// handler: the span and the metric say "_OTHER", the span keeps the path.
func TestUnknownMethod(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer tp.Shutdown(context.Background())
	srv := celerisgrpc.NewServer(
		celerisgrpc.StreamInterceptor(grpcotel.StreamServerInterceptor(celerisotel.WithTracerProvider(tp), celerisotel.WithMeterProvider(mp))),
		celerisgrpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
			return status.Error(codes.Unimplemented, "nothing here")
		}),
	)
	addr := serve(t, srv)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, m := range []string{"/made.Up/One", "/made.Up/Two"} {
		if err := conn.Invoke(ctx, m, wrapperspb.String("x"), new(wrapperspb.StringValue)); status.Code(err) != codes.Unimplemented {
			t.Fatalf("%s: %v", m, err)
		}
	}
	var spans []sdktrace.ReadOnlySpan
	for deadline := time.Now().Add(5 * time.Second); len(spans) < 2 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		spans = rec.Ended()
	}
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	for i, sp := range spans {
		a := map[string]any{}
		for _, kv := range sp.Attributes() {
			a[string(kv.Key)] = kv.Value.AsInterface()
		}
		want := []string{"/made.Up/One", "/made.Up/Two"}[i]
		if sp.Name() != "_OTHER" || a["rpc.method"] != "_OTHER" || a["rpc.method_original"] != want || a["rpc.service"] != nil {
			t.Errorf("span %q attributes %v", sp.Name(), a)
		}
		if sp.Status().Code != otelcodes.Error { // Unimplemented is a server error
			t.Errorf("status %v", sp.Status())
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "rpc.server.duration" {
				continue
			}
			dps := m.Data.(metricdata.Histogram[float64]).DataPoints
			if len(dps) != 1 || dps[0].Count != 2 {
				t.Errorf("unknown methods make %d series (want 1 of count 2)", len(dps))
			}
		}
	}
}

// serve serves srv on 127.0.0.1:0 until the test ends.
func serve(t *testing.T, srv *celerisgrpc.Server) string {
	t.Helper()
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", EventLoops: 1})
	s.POST("/*rpc", srv.Handler())
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	<-s.Ready()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-errc
	})
	return s.Addr().String()
}
