package celeris

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTransport records what the server asks of a Transport.
type fakeTransport struct {
	env     chan TransportEnv
	stop    chan struct{}
	once    sync.Once
	drains  atomic.Int32
	open    atomic.Int32 // what Drain and OpenConnections report
	stopped atomic.Bool
	altSvc  string
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{env: make(chan TransportEnv, 1), stop: make(chan struct{}), altSvc: `h3=":4433"; ma=60`}
}

func (f *fakeTransport) Serve(env TransportEnv) error {
	f.env <- env
	<-f.stop
	return nil
}

func (f *fakeTransport) WaitReady() (net.Addr, error) {
	env := <-f.env
	f.env <- env
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 4433}, nil
}

func (f *fakeTransport) AltSvc() string { return f.altSvc }

func (f *fakeTransport) Drain() int {
	f.drains.Add(1)
	n := f.open.Load()
	if n > 0 {
		f.open.Store(n - 1) // one connection at a time closes per drain
	}
	return int(n)
}

func (f *fakeTransport) Stop(context.Context) error {
	f.stopped.Store(true)
	f.once.Do(func() { close(f.stop) })
	return nil
}

func (f *fakeTransport) OpenConnections() int { return int(f.open.Load()) }

// TestTransport: a registered Transport starts after the TLS listener with its
// address, configuration and the server's limits; HTTP/1.1 and HTTP/2
// responses over TLS carry its Alt-Svc, plaintext ones do not; Stats counts
// its connections; Shutdown drains it until it has none, then stops it.
func TestTransport(t *testing.T) {
	ft := newFakeTransport()
	ft.open.Store(1)
	var s *Server
	s, plain, secure := startTLSServer(t, Config{MaxRequestBodySize: 12345, MaxConcurrentStreams: 7}, func(srv *Server) {
		testRoutes(srv)
		srv.AddTransport(ft)
	})
	env := <-ft.env
	ft.env <- env
	if env.TLSAddr.String() != secure || env.TLSConfig == nil || len(env.TLSConfig.Certificates) != 1 ||
		env.MaxRequestBodySize != 12345 || env.MaxConcurrentStreams != 7 || env.Logger == nil {
		t.Fatalf("env %+v", env)
	}
	for _, h2 := range []bool{true, false} {
		resp, err := tlsClient(t, h2).Get("https://" + secure + "/hello")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got := resp.Header.Values("Alt-Svc"); len(got) != 1 || got[0] != ft.altSvc {
			t.Fatalf("%s: Alt-Svc %q", resp.Proto, got)
		}
	}
	resp, err := http.Get("http://" + plain + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if v := resp.Header.Get("Alt-Svc"); v != "" {
		t.Fatalf("plaintext Alt-Svc %q", v)
	}
	if n := s.Stats().OpenConnections; n < 1 {
		t.Fatalf("open connections %d", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if ft.drains.Load() < 1 || !ft.stopped.Load() {
		t.Fatalf("drains %d, stopped %v", ft.drains.Load(), ft.stopped.Load())
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("AddTransport after Start did not panic")
			}
		}()
		s.AddTransport(newFakeTransport())
	}()
}

// TestTransportConfigAltSvc: Config.AltSvc wins over the transport's value and
// applies without a transport too.
func TestTransportConfigAltSvc(t *testing.T) {
	const v = `h3="alt.example:443"; ma=10`
	_, _, secure := startTLSServer(t, Config{AltSvc: v}, func(srv *Server) {
		testRoutes(srv)
		srv.AddTransport(newFakeTransport())
	})
	resp, err := tlsClient(t, true).Get("https://" + secure + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Alt-Svc"); got != v {
		t.Fatalf("Alt-Svc %q", got)
	}
}

// TestTransportNeedsTLS: a transport on a server without TLS fails Start.
func TestTransportNeedsTLS(t *testing.T) {
	s := New(Config{Addr: "127.0.0.1:0", Engine: EngineStd})
	s.AddTransport(newFakeTransport())
	err := s.Start()
	if err == nil || !strings.Contains(err.Error(), "needs TLS") {
		t.Fatalf("Start: %v", err)
	}
	if errors.Is(err, http.ErrServerClosed) {
		t.Fatal(err)
	}
}
