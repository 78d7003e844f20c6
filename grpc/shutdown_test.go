package celerisgrpc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/protobuf/proto"

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

const slowFor = time.Second

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

// TestShutdownWireOrder: on the wire, Shutdown of a connection with a health Watch
// open sends the two-step GOAWAY (NO_ERROR with the largest stream id and a PING,
// then, on the PING's ACK, with the last stream id the client opened) and the
// Watch's trailers (grpc-status 14, Unavailable); the client, which never ended its
// side, is then told to stop (RST_STREAM NO_ERROR, RFC 9113 §8.1), and the
// connection closes at once, not at Shutdown's deadline.
func TestShutdownWireOrder(t *testing.T) {
	srv := celerisgrpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", EventLoops: 1})
	s.POST("/*rpc", celeris.Adapt(srv))
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	<-s.Ready()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(nc, nc)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	_ = fr.WriteSettings()
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "POST"}, {":scheme", "http"}, {":authority", "x"},
		{":path", "/grpc.health.v1.Health/Watch"}, {"content-type", "application/grpc"}, {"te", "trailers"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true})
	req, _ := proto.Marshal(&healthpb.HealthCheckRequest{})
	_ = fr.WriteData(1, false, frame(0, req)) // the stream stays open, as a Watch does

	var events []string
	shut := make(chan error, 1)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			events = append(events, "closed")
			break
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.DataFrame:
			if len(events) == 0 { // the first status (SERVING): shut down now
				events = append(events, "message")
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
					defer cancel()
					shut <- s.Shutdown(ctx)
				}()
			}
		case *http2.PingFrame:
			if !f.IsAck() {
				_ = fr.WritePing(true, f.Data)
			}
		case *http2.GoAwayFrame:
			events = append(events, fmt.Sprintf("GOAWAY %v last=%d", f.ErrCode, f.LastStreamID))
		case *http2.MetaHeadersFrame:
			if f.StreamEnded() {
				events = append(events, "trailers grpc-status="+headerValue(f, "grpc-status"))
			}
		case *http2.RSTStreamFrame:
			events = append(events, "RST_STREAM "+f.ErrCode.String())
		}
	}
	// The GOAWAYs and the trailers leave independently (ShuttingDown closes as
	// the first GOAWAY is queued); the reset follows them, and the close ends it
	// all.
	want := []string{"message", "GOAWAY NO_ERROR last=2147483647", "GOAWAY NO_ERROR last=1", "trailers grpc-status=14", "RST_STREAM NO_ERROR", "closed"}
	got := slices.DeleteFunc(slices.Clone(events), func(e string) bool { return strings.HasPrefix(e, "trailers") })
	trailers := slices.Index(events, want[3])
	if len(events) != len(want) || trailers < 1 || trailers > 3 ||
		!slices.Equal(got, slices.DeleteFunc(slices.Clone(want), func(e string) bool { return strings.HasPrefix(e, "trailers") })) {
		t.Errorf("wire: %q\nwant %q (the trailers anywhere before the reset)", events, want)
	}
	if err := <-shut; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Start: %v", err)
	}
}

func headerValue(f *http2.MetaHeadersFrame, name string) string {
	for _, hf := range f.RegularFields() {
		if hf.Name == name {
			return hf.Value
		}
	}
	return ""
}
