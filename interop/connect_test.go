package interop

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/net/http2"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/celeris-dev/celeris"
)

// A minimal Connect service written by hand (no code generation): every method
// takes and returns google.protobuf.StringValue.
const (
	procEcho  = "/celeris.test.v1.TestService/Echo"  // unary
	procCount = "/celeris.test.v1.TestService/Count" // server streaming
	procSum   = "/celeris.test.v1.TestService/Sum"   // client streaming
	procChat  = "/celeris.test.v1.TestService/Chat"  // bidirectional streaming
)

type (
	msg    = wrapperspb.StringValue
	client = connect.Client[msg, msg]
)

// newConnectMux serves the test service with connect-go's handlers, which speak
// the Connect, gRPC and gRPC-Web protocols.
func newConnectMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(procEcho, connect.NewUnaryHandler(procEcho, func(ctx context.Context, req *connect.Request[msg]) (*connect.Response[msg], error) {
		if req.Msg.Value == "fail" {
			return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("asked to fail"))
		}
		res := connect.NewResponse(wrapperspb.String("echo: " + req.Msg.Value))
		res.Header().Set("X-Head", req.Header().Get("X-Ask"))
		res.Trailer().Set("X-Trail", "t-"+req.Msg.Value)
		return res, nil
	}))
	mux.Handle(procCount, connect.NewServerStreamHandler(procCount, func(ctx context.Context, req *connect.Request[msg], st *connect.ServerStream[msg]) error {
		for i := range 3 {
			if err := st.Send(wrapperspb.String(fmt.Sprintf("%s %d", req.Msg.Value, i))); err != nil {
				return err
			}
		}
		st.ResponseTrailer().Set("X-Trail", "counted")
		return nil
	}))
	mux.Handle(procSum, connect.NewClientStreamHandler(procSum, func(ctx context.Context, st *connect.ClientStream[msg]) (*connect.Response[msg], error) {
		var parts []string
		for st.Receive() {
			parts = append(parts, st.Msg().Value)
		}
		if err := st.Err(); err != nil {
			return nil, err
		}
		return connect.NewResponse(wrapperspb.String(strings.Join(parts, "+"))), nil
	}))
	mux.Handle(procChat, connect.NewBidiStreamHandler(procChat, func(ctx context.Context, st *connect.BidiStream[msg, msg]) error {
		for {
			m, err := st.Receive()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if err := st.Send(wrapperspb.String("re: " + m.Value)); err != nil {
				return err
			}
		}
	}))
	return mux
}

// connectTransports are the HTTP versions connect-go's client uses.
var connectTransports = map[string]func() *http.Client{
	"http1": func() *http.Client {
		tr := &http.Transport{}
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP1(true)
		return &http.Client{Transport: tr, Timeout: 30 * time.Second}
	},
	"h2c": func() *http.Client {
		return &http.Client{Timeout: 30 * time.Second, Transport: &http2.Transport{
			AllowHTTP: true,
			DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			},
		}}
	},
}

// TestConnect runs connect-go's client in each protocol (Connect, gRPC,
// gRPC-Web) over HTTP/1.1 and h2c against the service mounted with
// celeris.Adapt next to a REST route; net/http's h2c server is the reference.
// gRPC needs HTTP/2, and so does bidirectional streaming.
func TestConnect(t *testing.T) {
	register := func(s *celeris.Server) {
		s.GET("/health", func(c *celeris.Context) error { return c.String(http.StatusOK, "ok") })
		s.POST("/celeris.test.v1.TestService/*method", celeris.Adapt(newConnectMux()))
	}
	targets := map[string]string{
		"celeris":     startCeleris(t, celeris.Config{}, register),
		"nethttp-h2c": startNetHTTP(t, newConnectMux()),
	}
	protocols := map[string][]connect.ClientOption{
		"connect":  nil,
		"grpc":     {connect.WithGRPC()},
		"grpc-web": {connect.WithGRPCWeb()},
	}
	for _, target := range []string{"nethttp-h2c", "celeris"} {
		base := "http://" + targets[target]
		for _, tname := range []string{"http1", "h2c"} {
			for _, pname := range []string{"connect", "grpc", "grpc-web"} {
				if pname == "grpc" && tname == "http1" {
					continue // gRPC is HTTP/2 only
				}
				t.Run(target+"/"+pname+"/"+tname, func(t *testing.T) {
					hc := connectTransports[tname]()
					defer hc.CloseIdleConnections()
					mk := func(proc string) *client {
						return connect.NewClient[msg, msg](hc, base+proc, protocols[pname]...)
					}
					ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
					defer cancel()
					checkUnary(ctx, t, mk(procEcho))
					checkServerStream(ctx, t, mk(procCount))
					checkClientStream(ctx, t, mk(procSum))
					if tname == "h2c" {
						checkBidi(ctx, t, mk(procChat))
					}
				})
			}
		}
		if target == "celeris" {
			resp, err := http.Get(base + "/health")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "ok" {
				t.Fatalf("REST route next to the RPCs: %q", b)
			}
		}
	}
}

func checkUnary(ctx context.Context, t *testing.T, c *client) {
	t.Helper()
	req := connect.NewRequest(wrapperspb.String("hi"))
	req.Header().Set("X-Ask", "head")
	res, err := c.CallUnary(ctx, req)
	if err != nil {
		t.Fatalf("unary: %v", err)
	}
	if res.Msg.Value != "echo: hi" || res.Header().Get("X-Head") != "head" || res.Trailer().Get("X-Trail") != "t-hi" {
		t.Fatalf("unary: %q header %q trailer %q", res.Msg.Value, res.Header().Get("X-Head"), res.Trailer().Get("X-Trail"))
	}
	_, err = c.CallUnary(ctx, connect.NewRequest(wrapperspb.String("fail")))
	if connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("unary error: %v (code %v)", err, connect.CodeOf(err))
	}
}

func checkServerStream(ctx context.Context, t *testing.T, c *client) {
	t.Helper()
	st, err := c.CallServerStream(ctx, connect.NewRequest(wrapperspb.String("n")))
	if err != nil {
		t.Fatalf("server stream: %v", err)
	}
	var got []string
	for st.Receive() {
		got = append(got, st.Msg().Value)
	}
	if err := st.Err(); err != nil {
		t.Fatalf("server stream: %v", err)
	}
	if strings.Join(got, ",") != "n 0,n 1,n 2" || st.ResponseTrailer().Get("X-Trail") != "counted" {
		t.Fatalf("server stream: %q trailer %q", got, st.ResponseTrailer().Get("X-Trail"))
	}
	_ = st.Close()
}

func checkClientStream(ctx context.Context, t *testing.T, c *client) {
	t.Helper()
	st := c.CallClientStream(ctx)
	for _, v := range []string{"a", "b", "c"} {
		if err := st.Send(wrapperspb.String(v)); err != nil {
			t.Fatalf("client stream send: %v", err)
		}
	}
	res, err := st.CloseAndReceive()
	if err != nil {
		t.Fatalf("client stream: %v", err)
	}
	if res.Msg.Value != "a+b+c" {
		t.Fatalf("client stream: %q", res.Msg.Value)
	}
}

// checkBidi sends each message only after the answer to the previous one came
// back: the handler must answer while the request is still open.
func checkBidi(ctx context.Context, t *testing.T, c *client) {
	t.Helper()
	st := c.CallBidiStream(ctx)
	for _, v := range []string{"x", "y", "z"} {
		if err := st.Send(wrapperspb.String(v)); err != nil {
			t.Fatalf("bidi send: %v", err)
		}
		m, err := st.Receive()
		if err != nil || m.Value != "re: "+v {
			t.Fatalf("bidi receive: %v %v", m, err)
		}
	}
	if err := st.CloseRequest(); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Receive(); !errors.Is(err, io.EOF) {
		t.Fatalf("bidi end: %v", err)
	}
	_ = st.CloseResponse()
}
