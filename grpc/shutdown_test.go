package celerisgrpc_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/celeris-dev/celeris"
	celerisgrpc "github.com/celeris-dev/celeris/grpc"
)

// slowDesc is a service whose unary Slow signals that it started, then answers
// after slowFor: an RPC in flight when shutdown begins.
var slowDesc = grpc.ServiceDesc{
	ServiceName: "celeris.test.Slow",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Slow", Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
		if err := dec(new(testpb.Empty)); err != nil {
			return nil, err
		}
		srv.(chan struct{}) <- struct{}{}
		select {
		case <-time.After(slowFor):
			return new(testpb.Empty), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}}},
}

const slowFor = 600 * time.Millisecond

// TestShutdownEndsStreams: Shutdown of a Celeris server serving the native gRPC
// server ends its RPCs as grpc-go's GracefulStop does, without waiting for its
// deadline: the connection gets GOAWAY (a new RPC is not served there), a unary
// RPC in flight finishes, and streams that never end by themselves (a health
// Watch, a bidi stream blocked on the client) end with Unavailable. With
// StreamShutdownGrace(-1) the Watch holds Shutdown to its deadline, as it holds
// grpc-go's GracefulStop.
func TestShutdownEndsStreams(t *testing.T) {
	for _, tc := range []struct {
		name   string
		engine celeris.Engine
		opts   []celerisgrpc.Option
		grace  time.Duration // streams end this long after shutdown begins
		hold   bool          // streams are not ended: Shutdown meets its deadline
	}{
		{name: "auto", engine: celeris.EngineAuto},
		{name: "std", engine: celeris.EngineStd},
		{name: "grace", engine: celeris.EngineAuto, opts: []celerisgrpc.Option{celerisgrpc.StreamShutdownGrace(200 * time.Millisecond)}, grace: 200 * time.Millisecond},
		{name: "never", engine: celeris.EngineAuto, opts: []celerisgrpc.Option{celerisgrpc.StreamShutdownGrace(-1)}, hold: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			started := make(chan struct{}, 1)
			srv := newProbeServer(tc.opts...)
			srv.RegisterService(&slowDesc, started)
			hs := health.NewServer()
			healthpb.RegisterHealthServer(srv, hs)
			s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", Engine: tc.engine, EventLoops: 1})
			s.POST("/*rpc", celeris.Adapt(srv))
			errc := make(chan error, 1)
			go func() { errc <- s.Start() }()
			<-s.Ready()
			cc := dialPlain(t, s.Addr().String())
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()

			watch, err := healthpb.NewHealthClient(cc).Watch(ctx, &healthpb.HealthCheckRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if m, err := watch.Recv(); err != nil || m.Status != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("watch: %v %v", m, err)
			}
			count, err := cc.NewStream(ctx, &probeDesc.Streams[0], "/celeris.test.Probe/Count")
			if err != nil {
				t.Fatal(err)
			}
			if err := count.SendMsg(&testpb.SimpleRequest{}); err != nil {
				t.Fatal(err)
			}
			if err := count.RecvMsg(new(testpb.SimpleResponse)); err != nil {
				t.Fatal(err)
			}
			slow := make(chan error, 1)
			go func() { slow <- cc.Invoke(ctx, "/celeris.test.Slow/Slow", new(testpb.Empty), new(testpb.Empty)) }()
			<-started

			sctx, scancel := context.WithTimeout(context.Background(), 3*time.Second)
			if tc.hold {
				sctx, scancel = context.WithTimeout(context.Background(), slowFor+500*time.Millisecond)
			}
			defer scancel()
			begin := time.Now()
			shut := make(chan error, 1)
			go func() { shut <- s.Shutdown(sctx) }()
			<-s.ShuttingDown()

			type ended struct {
				err   error
				after time.Duration
			}
			watched := make(chan ended, 1)
			go func() {
				_, err := watch.Recv()
				watched <- ended{err, time.Since(begin)}
			}()
			if err := <-slow; err != nil {
				t.Errorf("unary RPC in flight: %v, want it to finish", err)
			}
			cerr := count.RecvMsg(new(testpb.SimpleResponse))
			serr := <-shut
			took := time.Since(begin)
			w := <-watched
			werr := w.err
			if !tc.hold && (w.after < tc.grace || w.after > tc.grace+slowFor/2) {
				t.Errorf("the Watch ended %v after shutdown began, want after its grace (%v), before the unary RPC ended", w.after, tc.grace)
			}
			if tc.hold {
				if !errors.Is(serr, context.DeadlineExceeded) {
					t.Errorf("Shutdown: %v after %v, want the Watch to hold it to its deadline", serr, took)
				}
			} else {
				for name, err := range map[string]error{"watch": werr, "bidi": cerr} {
					if status.Code(err) != codes.Unavailable {
						t.Errorf("%s stream: %v, want Unavailable", name, err)
					}
				}
				if serr != nil || took > slowFor+time.Second {
					t.Errorf("Shutdown: %v after %v, want nil once the unary RPC ended", serr, took)
				}
			}
			if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("Start: %v", err)
			}
			// GOAWAY: the connection takes no new RPC, and the server is gone.
			ectx, ecancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer ecancel()
			err = cc.Invoke(ectx, "/celeris.test.Probe/Echo", &testpb.SimpleRequest{}, new(testpb.SimpleResponse))
			if code := status.Code(err); code != codes.Unavailable {
				t.Errorf("RPC after shutdown: %v, want Unavailable", err)
			}
		})
	}
}
