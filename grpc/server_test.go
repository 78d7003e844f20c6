package celerisgrpc_test

import (
	"bytes"
	stdgzip "compress/gzip"
	"context"
	"crypto/tls"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/celeris-dev/celeris"
	celerisgrpc "github.com/celeris-dev/celeris/grpc"
)

// probe is a hand-written service (no generated code): its methods report what
// the server gave the handler, or misbehave on purpose.
type probe struct{}

var probeDesc = grpc.ServiceDesc{
	ServiceName: "celeris.test.Probe",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Echo", Handler: probeEcho},
		{MethodName: "Wait", Handler: probeWait},
		{MethodName: "Fail", Handler: probeFail},
		{MethodName: "Panic", Handler: func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
			panic("probe panic")
		}},
	},
	Streams: []grpc.StreamDesc{
		{StreamName: "Count", Handler: probeCount, ServerStreams: true, ClientStreams: true},
	},
}

// probeEcho answers with the request's payload; it reports the incoming
// metadata in the response header (x-seen-*), sets header and trailer
// metadata through grpc.SetHeader/SetTrailer, and puts the peer address and
// the deadline's presence in the trailer.
func probeEcho(_ any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
	in := new(testpb.SimpleRequest)
	if err := dec(in); err != nil {
		return nil, err
	}
	h := func(ctx context.Context, req any) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		hdr := metadata.MD{}
		for k, vs := range md {
			hdr["x-seen-"+strings.TrimPrefix(k, ":")] = vs
		}
		if err := grpc.SetHeader(ctx, hdr); err != nil {
			return nil, err
		}
		trl := metadata.Pairs("x-trailer", "t1", "x-trailer-bin", "\x00\xff")
		if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
			trl.Set("x-peer", p.Addr.String())
		}
		if _, ok := ctx.Deadline(); ok {
			trl.Set("x-deadline", "yes")
		}
		if p, ok := peer.FromContext(ctx); ok && p.AuthInfo != nil {
			trl.Set("x-auth", p.AuthInfo.AuthType())
		}
		if err := grpc.SetTrailer(ctx, trl); err != nil {
			return nil, err
		}
		if m, ok := grpc.Method(ctx); !ok || m != "/celeris.test.Probe/Echo" {
			return nil, status.Errorf(codes.Internal, "grpc.Method = %q", m)
		}
		return &testpb.SimpleResponse{Payload: req.(*testpb.SimpleRequest).Payload}, nil
	}
	if ic == nil {
		return h(ctx, in)
	}
	return ic(ctx, in, &grpc.UnaryServerInfo{FullMethod: "/celeris.test.Probe/Echo"}, h)
}

// probeWait blocks until its context ends and returns its error.
func probeWait(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	if err := dec(new(testpb.Empty)); err != nil {
		return nil, err
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// probeFail fails with a status that has details, after sending header metadata.
func probeFail(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	if err := dec(new(testpb.Empty)); err != nil {
		return nil, err
	}
	if err := grpc.SendHeader(ctx, metadata.Pairs("x-early", "1")); err != nil {
		return nil, err
	}
	st, err := status.New(codes.FailedPrecondition, "bad state: 100% ☺").
		WithDetails(&errdetails.ErrorInfo{Reason: "R", Domain: "d"})
	if err != nil {
		return nil, err
	}
	return nil, st.Err()
}

// probeCount answers every request message with a running count of the
// messages received; a stream deadline also ends a blocked RecvMsg.
func probeCount(_ any, ss grpc.ServerStream) error {
	n := 0
	for {
		in := new(testpb.SimpleRequest)
		if err := ss.RecvMsg(in); err == io.EOF {
			ss.SetTrailer(metadata.Pairs("x-total", strings.Repeat("i", n)))
			return nil
		} else if err != nil {
			return err
		}
		n++
		if err := ss.SendMsg(&testpb.SimpleResponse{Payload: &testpb.Payload{Body: bytes.Repeat([]byte{'x'}, n)}}); err != nil {
			return err
		}
	}
}

func newProbeServer(opts ...celerisgrpc.Option) *celerisgrpc.Server {
	srv := celerisgrpc.NewServer(opts...)
	srv.RegisterService(&probeDesc, probe{})
	return srv
}

// mounts serves the same server natively on Celeris (through Adapt and through
// Handler) and under net/http.
func mounts(t *testing.T, srv *celerisgrpc.Server) map[string]string {
	t.Helper()
	return map[string]string{
		"celeris-adapt": startCeleris(t, celeris.Config{}, srv),
		"celeris-handler": func() string {
			s, addr := startCelerisHandler(t, srv)
			_ = s
			return addr
		}(),
		"nethttp": startNetHTTP(t, srv),
	}
}

func startCelerisHandler(t *testing.T, srv *celerisgrpc.Server) (*celeris.Server, string) {
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
	return s, s.Addr().String()
}

func dialPlain(t *testing.T, addr string) *grpc.ClientConn {
	return dial(t, addr, "")
}

// Metadata in both directions, -bin values, trailers, peer, deadline and
// interceptors, on every mount.
func TestMetadataAndTrailers(t *testing.T) {
	var intercepted atomic.Int32
	srv := newProbeServer(celerisgrpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		intercepted.Add(1)
		return h(ctx, req)
	}))
	for name, addr := range mounts(t, srv) {
		t.Run(name, func(t *testing.T) {
			conn := dialPlain(t, addr)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			ctx = metadata.AppendToOutgoingContext(ctx, "x-plain", "v1", "x-plain", "v2", "x-data-bin", "\x00\x01\xfe")
			var hdr, trl metadata.MD
			out := new(testpb.SimpleResponse)
			in := &testpb.SimpleRequest{Payload: &testpb.Payload{Body: []byte("ping")}}
			before := intercepted.Load()
			if err := conn.Invoke(ctx, "/celeris.test.Probe/Echo", in, out, grpc.Header(&hdr), grpc.Trailer(&trl)); err != nil {
				t.Fatal(err)
			}
			if string(out.GetPayload().GetBody()) != "ping" {
				t.Errorf("payload %q", out.GetPayload().GetBody())
			}
			if intercepted.Load() != before+1 {
				t.Error("the unary interceptor did not run")
			}
			if got := hdr.Get("x-seen-x-plain"); strings.Join(got, ",") != "v1,v2" {
				t.Errorf("x-plain seen as %q", got)
			}
			if got := hdr.Get("x-seen-x-data-bin"); len(got) != 1 || got[0] != "\x00\x01\xfe" {
				t.Errorf("x-data-bin seen as %q", got)
			}
			if got := hdr.Get("x-seen-content-type"); len(got) != 1 || got[0] != "application/grpc" {
				t.Errorf("content-type seen as %q", got)
			}
			if got := hdr.Get("x-seen-user-agent"); len(got) != 1 || !strings.Contains(got[0], "grpc-go") {
				t.Errorf("user-agent seen as %q", got)
			}
			if got := hdr.Get("x-seen-authority"); len(got) != 1 || got[0] != addr {
				t.Errorf(":authority seen as %q, want %q", got, addr)
			}
			for _, k := range []string{"x-seen-grpc-timeout", "x-seen-te", "x-seen-path"} {
				if got := hdr.Get(k); len(got) != 0 {
					t.Errorf("reserved header reached metadata: %s = %q", k, got)
				}
			}
			if got := trl.Get("x-trailer"); len(got) != 1 || got[0] != "t1" {
				t.Errorf("x-trailer %q", got)
			}
			if got := trl.Get("x-trailer-bin"); len(got) != 1 || got[0] != "\x00\xff" {
				t.Errorf("x-trailer-bin %q", got)
			}
			if got := trl.Get("x-peer"); len(got) != 1 || !strings.HasPrefix(got[0], "127.0.0.1:") {
				t.Errorf("peer %q", got)
			}
			if got := trl.Get("x-deadline"); len(got) != 1 {
				t.Error("the handler's context has no deadline despite grpc-timeout")
			}
		})
	}
}

// A status with details and a percent-encoded message, after an explicit
// SendHeader, arrives whole.
func TestStatusDetails(t *testing.T) {
	for name, addr := range mounts(t, newProbeServer()) {
		t.Run(name, func(t *testing.T) {
			conn := dialPlain(t, addr)
			var hdr metadata.MD
			err := conn.Invoke(context.Background(), "/celeris.test.Probe/Fail", new(testpb.Empty), new(testpb.Empty), grpc.Header(&hdr))
			st := status.Convert(err)
			if st.Code() != codes.FailedPrecondition || st.Message() != "bad state: 100% ☺" {
				t.Fatalf("status %v %q", st.Code(), st.Message())
			}
			if len(st.Details()) != 1 {
				t.Fatalf("details %v", st.Details())
			}
			if ei, ok := st.Details()[0].(*errdetails.ErrorInfo); !ok || ei.Reason != "R" {
				t.Errorf("detail %v", st.Details()[0])
			}
			if got := hdr.Get("x-early"); len(got) != 1 {
				t.Errorf("header sent with SendHeader: %q", got)
			}
		})
	}
}

// A grpc-timeout ends the handler's context: DeadlineExceeded.
func TestDeadline(t *testing.T) {
	for name, addr := range mounts(t, newProbeServer()) {
		t.Run(name, func(t *testing.T) {
			conn := dialPlain(t, addr)
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			err := conn.Invoke(ctx, "/celeris.test.Probe/Wait", new(testpb.Empty), new(testpb.Empty))
			if status.Code(err) != codes.DeadlineExceeded {
				t.Fatalf("err = %v, want DeadlineExceeded", err)
			}
		})
	}
}

// A client cancel reaches the handler (the Wait handler returns), and the
// server keeps serving.
func TestClientCancel(t *testing.T) {
	srv := newProbeServer()
	addr := startCeleris(t, celeris.Config{}, srv)
	conn := dialPlain(t, addr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- conn.Invoke(ctx, "/celeris.test.Probe/Wait", new(testpb.Empty), new(testpb.Empty)) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-done; status.Code(err) != codes.Canceled {
		t.Fatalf("err = %v, want Canceled", err)
	}
	if err := conn.Invoke(context.Background(), "/celeris.test.Probe/Echo", &testpb.SimpleRequest{}, new(testpb.SimpleResponse)); err != nil {
		t.Fatalf("after cancel: %v", err)
	}
}

// Unknown services and methods are Unimplemented.
func TestUnimplemented(t *testing.T) {
	for name, addr := range mounts(t, newProbeServer()) {
		t.Run(name, func(t *testing.T) {
			conn := dialPlain(t, addr)
			for path, msg := range map[string]string{
				"/celeris.test.Probe/Nope": "unknown method Nope for service celeris.test.Probe",
				"/celeris.test.Nope/Echo":  "unknown service celeris.test.Nope",
			} {
				err := conn.Invoke(context.Background(), path, new(testpb.Empty), new(testpb.Empty))
				if st := status.Convert(err); st.Code() != codes.Unimplemented || st.Message() != msg {
					t.Errorf("%s: %v %q", path, st.Code(), st.Message())
				}
			}
		})
	}
}

// UnknownServiceHandler serves what no service has.
func TestUnknownServiceHandler(t *testing.T) {
	srv := celerisgrpc.NewServer(celerisgrpc.UnknownServiceHandler(func(_ any, ss grpc.ServerStream) error {
		m, _ := grpc.Method(ss.Context())
		return status.Error(codes.NotFound, "nothing at "+m)
	}))
	conn := dialPlain(t, startCeleris(t, celeris.Config{}, srv))
	err := conn.Invoke(context.Background(), "/x.Y/Z", new(testpb.Empty), new(testpb.Empty))
	if st := status.Convert(err); st.Code() != codes.NotFound || st.Message() != "nothing at /x.Y/Z" {
		t.Fatalf("%v", err)
	}
}

// A request message over MaxRecvMsgSize is ResourceExhausted; one at the limit
// passes. A response over MaxSendMsgSize is ResourceExhausted too.
func TestMessageSizeLimits(t *testing.T) {
	srv := newProbeServer(celerisgrpc.MaxRecvMsgSize(1000), celerisgrpc.MaxSendMsgSize(2000))
	for name, addr := range mounts(t, srv) {
		t.Run(name, func(t *testing.T) {
			conn := dialPlain(t, addr)
			call := func(n int) error {
				in := &testpb.SimpleRequest{Payload: &testpb.Payload{Body: make([]byte, n)}}
				return conn.Invoke(context.Background(), "/celeris.test.Probe/Echo", in, new(testpb.SimpleResponse))
			}
			if err := call(900); err != nil {
				t.Fatalf("small: %v", err)
			}
			if err := call(5000); status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("large: %v, want ResourceExhausted", err)
			}
		})
	}
	// Replies over MaxSendMsgSize fail the RPC; the reply of Count's first
	// message (a 1-byte payload) encodes to more than 4 bytes.
	for name, addr := range mounts(t, newProbeServer(celerisgrpc.MaxSendMsgSize(4))) {
		t.Run("send-"+name, func(t *testing.T) {
			conn := dialPlain(t, addr)
			st, err := conn.NewStream(context.Background(), &probeDesc.Streams[0], "/celeris.test.Probe/Count")
			if err != nil {
				t.Fatal(err)
			}
			if err := st.SendMsg(&testpb.SimpleRequest{}); err != nil {
				t.Fatal(err)
			}
			if err := st.RecvMsg(new(testpb.SimpleResponse)); status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("reply over the send limit: %v, want ResourceExhausted", err)
			}
		})
	}
}

// A bidirectional stream: replies interleave with requests, the trailer counts
// them.
func TestBidiStream(t *testing.T) {
	for name, addr := range mounts(t, newProbeServer()) {
		t.Run(name, func(t *testing.T) {
			conn := dialPlain(t, addr)
			st, err := conn.NewStream(context.Background(), &probeDesc.Streams[0], "/celeris.test.Probe/Count")
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 5; i++ {
				if err := st.SendMsg(&testpb.SimpleRequest{}); err != nil {
					t.Fatal(err)
				}
				out := new(testpb.SimpleResponse)
				if err := st.RecvMsg(out); err != nil {
					t.Fatal(err)
				}
				if len(out.GetPayload().GetBody()) != i {
					t.Fatalf("reply %d has %d bytes", i, len(out.GetPayload().GetBody()))
				}
			}
			if err := st.CloseSend(); err != nil {
				t.Fatal(err)
			}
			if err := st.RecvMsg(new(testpb.SimpleResponse)); err != io.EOF {
				t.Fatalf("end: %v", err)
			}
			if got := st.Trailer().Get("x-total"); len(got) != 1 || got[0] != "iiiii" {
				t.Errorf("trailer %q", got)
			}
		})
	}
}

// h2cClient is a raw HTTP/2 client (prior knowledge), for requests grpc-go's
// client never sends.
func h2cClient() *http.Client {
	return &http.Client{Transport: &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}, Timeout: 10 * time.Second}
}

func frame(flag byte, msg []byte) []byte {
	b := []byte{flag, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(len(msg)))
	return append(b, msg...)
}

// Requests that are not gRPC get the HTTP answers the spec names; malformed
// gRPC bodies get a gRPC status.
func TestRawRequests(t *testing.T) {
	empty, _ := proto.Marshal(&testpb.SimpleRequest{})
	tests := []struct {
		name     string
		method   string
		ct       string
		header   map[string]string
		body     []byte
		status   int
		grpcCode string // "" when the answer is not gRPC
	}{
		{name: "GET", method: "GET", ct: "application/grpc", status: 405},
		{name: "json", method: "POST", ct: "application/json", status: 415},
		{name: "grpc+json", method: "POST", ct: "application/grpc+json", status: 415},
		{name: "no content-type", method: "POST", status: 415},
		{name: "ok", method: "POST", ct: "application/grpc", body: frame(0, empty), status: 200, grpcCode: "0"},
		{name: "grpc+proto", method: "POST", ct: "application/grpc+proto", body: frame(0, empty), status: 200, grpcCode: "0"},
		{name: "no message", method: "POST", ct: "application/grpc", status: 200, grpcCode: "13"},
		{name: "bad flag", method: "POST", ct: "application/grpc", body: frame(7, empty), status: 200, grpcCode: "13"},
		{name: "compressed, no encoding", method: "POST", ct: "application/grpc", body: frame(1, empty), status: 200, grpcCode: "13"},
		{name: "truncated prefix", method: "POST", ct: "application/grpc", body: []byte{0, 0, 0}, status: 200, grpcCode: "13"},
		{name: "truncated message", method: "POST", ct: "application/grpc", body: frame(0, []byte("abcdef"))[:8], status: 200, grpcCode: "13"},
		{name: "garbage message", method: "POST", ct: "application/grpc", body: frame(0, []byte{0xff, 0xff}), status: 200, grpcCode: "13"},
		{name: "encoding unsupported", method: "POST", ct: "application/grpc", header: map[string]string{"grpc-encoding": "snappy"}, body: frame(0, empty), status: 200, grpcCode: "12"},
		{name: "gzip, message not compressed", method: "POST", ct: "application/grpc", header: map[string]string{"grpc-encoding": "gzip"}, body: frame(0, empty), status: 200, grpcCode: "0"},
		{name: "gzip, not gzip data", method: "POST", ct: "application/grpc", header: map[string]string{"grpc-encoding": "gzip"}, body: frame(1, []byte("plain")), status: 200, grpcCode: "13"},
		{name: "bad timeout", method: "POST", ct: "application/grpc", header: map[string]string{"grpc-timeout": "forever"}, body: frame(0, empty), status: 200, grpcCode: "13"},
		{name: "bad bin metadata", method: "POST", ct: "application/grpc", header: map[string]string{"x-bad-bin": "!!"}, body: frame(0, empty), status: 200, grpcCode: "13"},
	}
	hc := h2cClient()
	for name, addr := range mounts(t, newProbeServer()) {
		t.Run(name, func(t *testing.T) {
			for _, tt := range tests {
				req, _ := http.NewRequest(tt.method, "http://"+addr+"/celeris.test.Probe/Echo", bytes.NewReader(tt.body))
				if tt.ct != "" {
					req.Header.Set("Content-Type", tt.ct)
				}
				req.Header.Set("TE", "trailers")
				for k, v := range tt.header {
					req.Header.Set(k, v)
				}
				resp, err := hc.Do(req)
				if err != nil {
					t.Errorf("%s: %v", tt.name, err)
					continue
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tt.status {
					t.Errorf("%s: status %d, want %d (%q)", tt.name, resp.StatusCode, tt.status, body)
					continue
				}
				if tt.grpcCode == "" {
					continue
				}
				got := resp.Header.Get("Grpc-Status") // Trailers-Only
				if got == "" {
					got = resp.Trailer.Get("Grpc-Status")
				}
				if got != tt.grpcCode {
					t.Errorf("%s: grpc-status %q, want %s (header %v, trailer %v)", tt.name, got, tt.grpcCode, resp.Header, resp.Trailer)
				}
				if ct := resp.Header.Get("Content-Type"); ct != "application/grpc" {
					t.Errorf("%s: content-type %q", tt.name, ct)
				}
				if tt.name == "encoding unsupported" && resp.Header.Get("Grpc-Accept-Encoding") != "identity,gzip" {
					t.Errorf("%s: no grpc-accept-encoding: %v", tt.name, resp.Header)
				}
			}
		})
	}
}

// HTTP/1.1 is refused with 505 (gRPC needs HTTP/2).
func TestHTTP1Refused(t *testing.T) {
	addr := startCeleris(t, celeris.Config{}, newProbeServer())
	req, _ := http.NewRequest("POST", "http://"+addr+"/celeris.test.Probe/Echo", bytes.NewReader(frame(0, nil)))
	req.Header.Set("Content-Type", "application/grpc")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusHTTPVersionNotSupported {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// Registration checks as grpc-go's: a duplicate service and an implementation
// of the wrong type panic; GetServiceInfo lists what was registered.
func TestRegisterService(t *testing.T) {
	srv := newProbeServer()
	info := srv.GetServiceInfo()["celeris.test.Probe"]
	if len(info.Methods) != 5 {
		t.Errorf("methods %v", info.Methods)
	}
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic", name)
			}
		}()
		f()
	}
	mustPanic("duplicate", func() { srv.RegisterService(&probeDesc, probe{}) })
	typed := grpc.ServiceDesc{ServiceName: "x.Typed", HandlerType: (*testpb.TestServiceServer)(nil)}
	mustPanic("wrong type", func() { celerisgrpc.NewServer().RegisterService(&typed, probe{}) })
}

// gzip-compressed requests (grpc.UseCompressor) are decompressed, and the
// answers compressed the same way, unary and streaming.
func TestGzip(t *testing.T) {
	for name, addr := range mounts(t, newProbeServer()) {
		t.Run(name, func(t *testing.T) {
			conn := dialPlain(t, addr)
			body := bytes.Repeat([]byte("compressible "), 1000)
			in := &testpb.SimpleRequest{Payload: &testpb.Payload{Body: body}}
			out := new(testpb.SimpleResponse)
			if err := conn.Invoke(context.Background(), "/celeris.test.Probe/Echo", in, out, grpc.UseCompressor(gzip.Name)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.GetPayload().GetBody(), body) {
				t.Fatalf("echo of %d bytes came back as %d", len(body), len(out.GetPayload().GetBody()))
			}
			st, err := conn.NewStream(context.Background(), &probeDesc.Streams[0], "/celeris.test.Probe/Count", grpc.UseCompressor(gzip.Name))
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 3; i++ {
				if err := st.SendMsg(in); err != nil {
					t.Fatal(err)
				}
				if err := st.RecvMsg(out); err != nil || len(out.GetPayload().GetBody()) != i {
					t.Fatalf("reply %d: %v, %d bytes", i, err, len(out.GetPayload().GetBody()))
				}
			}
			_ = st.CloseSend()
			if err := st.RecvMsg(out); err != io.EOF {
				t.Fatalf("end: %v", err)
			}
		})
	}
}

// A raw gzip request gets a gzip answer (grpc-encoding: gzip, flag 1).
func TestGzipResponseOnTheWire(t *testing.T) {
	addr := startCeleris(t, celeris.Config{}, newProbeServer())
	payload, _ := proto.Marshal(&testpb.SimpleRequest{Payload: &testpb.Payload{Body: []byte("hi")}})
	var zb bytes.Buffer
	zw := stdgzip.NewWriter(&zb)
	zw.Write(payload)
	zw.Close()
	req, _ := http.NewRequest("POST", "http://"+addr+"/celeris.test.Probe/Echo", bytes.NewReader(frame(1, zb.Bytes())))
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("Grpc-Encoding", "gzip")
	req.Header.Set("TE", "trailers")
	resp, err := h2cClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Grpc-Encoding") != "gzip" || resp.Trailer.Get("Grpc-Status") != "0" {
		t.Fatalf("header %v trailer %v", resp.Header, resp.Trailer)
	}
	if len(body) < prefix || body[0] != 1 {
		t.Fatalf("answer %x is not a compressed message", body)
	}
	zr, err := stdgzip.NewReader(bytes.NewReader(body[prefix:]))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	out := new(testpb.SimpleResponse)
	if err := proto.Unmarshal(raw, out); err != nil || string(out.GetPayload().GetBody()) != "hi" {
		t.Fatalf("answer %v, %v", out, err)
	}
}

const prefix = 5

// Over TLS the peer carries credentials.TLSInfo, as under grpc-go's server.
func TestTLSPeer(t *testing.T) {
	addr, ca := startCelerisTLS(t, newProbeServer())
	conn := dial(t, addr, ca)
	var trl metadata.MD
	err := conn.Invoke(context.Background(), "/celeris.test.Probe/Echo", &testpb.SimpleRequest{}, new(testpb.SimpleResponse), grpc.Trailer(&trl))
	if err != nil {
		t.Fatal(err)
	}
	if got := trl.Get("x-auth"); len(got) != 1 || got[0] != "tls" {
		t.Fatalf("peer AuthInfo %q, want tls", got)
	}
}

// A grpc-timeout also ends a RecvMsg blocked on a client that sends nothing
// and does not reset the stream: the server closes the request body, the
// handler returns and the client gets DEADLINE_EXCEEDED from the server.
func TestDeadlineEndsBlockedRead(t *testing.T) {
	ended := make(chan error, 4)
	srv := newProbeServer(celerisgrpc.StreamInterceptor(func(impl any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		err := h(impl, ss)
		ended <- err
		return err
	}))
	for name, addr := range mounts(t, srv) {
		t.Run(name, func(t *testing.T) {
			pr, pw := io.Pipe()
			defer pw.Close()
			req, _ := http.NewRequest("POST", "http://"+addr+"/celeris.test.Probe/Count", pr)
			req.Header.Set("Content-Type", "application/grpc")
			req.Header.Set("Grpc-Timeout", "100m")
			req.Header.Set("TE", "trailers")
			resp, err := h2cClient().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			got := resp.Trailer.Get("Grpc-Status")
			if got == "" {
				got = resp.Header.Get("Grpc-Status")
			}
			if got != "4" {
				t.Errorf("grpc-status %q, want 4 (header %v, trailer %v)", got, resp.Header, resp.Trailer)
			}
			select {
			case err := <-ended:
				if status.Code(err) != codes.DeadlineExceeded {
					t.Errorf("handler returned %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the handler is still blocked in RecvMsg")
			}
		})
	}
}

// A panicking handler fails its RPC with Internal (Celeris recovers and logs
// the panic); the connection keeps serving.
func TestHandlerPanic(t *testing.T) {
	addr := startCeleris(t, celeris.Config{}, newProbeServer())
	conn := dialPlain(t, addr)
	err := conn.Invoke(context.Background(), "/celeris.test.Probe/Panic", new(testpb.Empty), new(testpb.Empty))
	if status.Code(err) != codes.Internal {
		t.Fatalf("err = %v, want Internal", err)
	}
	if err := conn.Invoke(context.Background(), "/celeris.test.Probe/Echo", &testpb.SimpleRequest{}, new(testpb.SimpleResponse)); err != nil {
		t.Fatalf("after the panic: %v", err)
	}
}
