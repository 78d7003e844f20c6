package celeris

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h1"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// startServer starts s on 127.0.0.1:0 with register's routes and stops it when the
// test ends. It returns the server's address.
func startServer(t testing.TB, cfg Config, register func(s *Server)) (*Server, string) {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	return startServerAt(t, cfg, register)
}

// startServerAt is startServer on cfg.Addr as given.
func startServerAt(t testing.TB, cfg Config, register func(s *Server)) (*Server, string) {
	t.Helper()
	if cfg.EventLoops == 0 {
		cfg.EventLoops = 2
	}
	if cfg.Engine == EngineAuto {
		cfg.Engine = engineFor(t)
	}
	s := New(cfg)
	if register != nil {
		register(s)
	}
	errc := runServer(t, s)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("start returned %v", err)
		}
	})
	return s, s.Addr().String()
}

// runServer starts s and waits until it is ready. The channel gets what Start
// returned.
func runServer(t testing.TB, s *Server) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	select {
	case <-s.Ready():
	case err := <-errc:
		t.Fatalf("start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	return errc
}

// rawConn is a raw TCP client for wire-level tests.
type rawConn struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

func (r *rawConn) send(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.c, s); err != nil {
		r.t.Fatal(err)
	}
}

// trickle sends s one byte at a time, each in a segment of its own, so that
// the server parses a request that comes in pieces.
func (r *rawConn) trickle(s string) {
	r.t.Helper()
	for i := range len(s) {
		r.send(s[i : i+1])
		testkit.Slow(500 * time.Microsecond) // a sleep: a byte is read on its own only if the next has not come yet, and no event says the server read it
	}
}

// readResponse reads one response; the body is read completely.
func (r *rawConn) readResponse(method string) *http.Response {
	r.t.Helper()
	resp, err := http.ReadResponse(r.br, &http.Request{Method: method})
	if err != nil {
		r.t.Fatalf("read response: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatalf("read body: %v", err)
	}
	resp.Body = io.NopCloser(strings.NewReader(string(body)))
	resp.ContentLength = int64(len(body))
	return resp
}

// expectClosed checks that the server closed the connection.
func (r *rawConn) expectClosed() {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, err := r.br.ReadByte()
	if err == nil {
		r.t.Fatalf("connection still open: read %q", b)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		r.t.Fatal("connection still open after 5s")
	}
}

// rawGet sends GET path on a new raw connection and returns the answer's status
// and body.
func rawGet(t testing.TB, addr, path string) (int, string) {
	t.Helper()
	r := dialRaw(t, addr)
	r.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
	resp := r.readResponse("GET")
	return resp.StatusCode, bodyString(t, resp)
}

func bodyString(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return string(b)
}

// inlineServe returns a function that feeds req to a fresh HTTP/1.1 connection of
// s without network and leaves the response in fc.out.
func inlineServe(t *testing.T, s *Server, req []byte) (serve func(), fc *fakeConn) {
	fc = &fakeConn{}
	cn := h1.NewConn(fc, &s.h1cfg)
	return func() {
		fc.out = fc.out[:0]
		if n, err := cn.OnData(req); n != len(req) || err != nil {
			t.Fatalf("OnData = %d, %v", n, err)
		}
	}, fc
}

// lockedBuffer is a buffer safe for concurrent writes (a logger's output).
type lockedBuffer = testkit.Log
