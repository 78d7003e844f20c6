//go:build !race

package celerish3

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/hook"
	"github.com/quic-go/quic-go"
)

// memStream is a request stream in memory: Read returns in, then io.EOF
// (the client's FIN); Write appends to out.
type memStream struct {
	in  []byte
	r   int
	out []byte
}

func (m *memStream) Read(p []byte) (int, error) {
	if m.r == len(m.in) {
		return 0, io.EOF
	}
	n := copy(p, m.in[m.r:])
	m.r += n
	return n, nil
}
func (m *memStream) Write(p []byte) (int, error)      { m.out = append(m.out, p...); return len(p), nil }
func (m *memStream) Close() error                     { return nil }
func (m *memStream) CancelRead(quic.StreamErrorCode)  {}
func (m *memStream) CancelWrite(quic.StreamErrorCode) {}
func (m *memStream) SetReadDeadline(time.Time) error  { return nil }
func (m *memStream) StreamID() quic.StreamID          { return 4 }

var jsonBody = []byte(`{"message":"Hello, World!"}`)

// TestServeGETAllocs: a GET through the request-stream code (frames in,
// QPACK decoding, router, Context, handler, QPACK encoding, frames out)
// allocates nothing, for the benchmark's three routes.
func TestServeGETAllocs(t *testing.T) {
	c := memConn()
	ctx := context.Background()
	for _, tc := range []struct{ path, body string }{
		{path: "/bench", body: "OK"},
		{path: "/json", body: `{"message":"Hello, World!"}`},
		{path: "/users/42/posts/7", body: "7"},
	} {
		ms := &memStream{in: memGET(tc.path)}
		serve := func() { serveMem(c, ms, ctx) }
		serve()
		if !bytes.HasSuffix(ms.out, []byte(tc.body)) || status(t, ms.out) != "200" {
			t.Fatalf("%s: response %q", tc.path, ms.out)
		}
		if a := testing.AllocsPerRun(1000, serve); a != 0 {
			t.Errorf("%s: %v allocations per request, want 0", tc.path, a)
		}
	}
}

// BenchmarkServeGET: the request-stream code alone (no QUIC) for a GET of
// /users/42/posts/7: the part of BenchmarkGET's server CPU time that this
// package and the framework control.
func BenchmarkServeGET(b *testing.B) {
	c := memConn()
	ms := &memStream{in: memGET("/users/42/posts/7")}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		serveMem(c, ms, ctx)
	}
}

// memGET is a request stream's bytes for a GET of path, as quic-go's client
// sends it.
func memGET(path string) []byte {
	return frameBytes(frameHeaders, block(":method", "GET", ":scheme", "https", ":authority", "localhost:8443",
		":path", path, "user-agent", "Go-http-client/3", "accept-encoding", "gzip"))
}

// serveMem serves ms's request as conn.serve's stream goroutine does.
func serveMem(c *conn, ms *memStream, ctx context.Context) {
	ms.r, ms.out = 0, ms.out[:0]
	st := streamPool.Get().(*reqStream)
	st.reset()
	st.c, st.str = c, ms
	st.handle(ctx)
	st.reset()
	streamPool.Put(st)
}

// memConn is a connection without QUIC whose server serves the benchmark's
// routes.
func memConn() *conn {
	s := celeris.New(celeris.Config{})
	s.GET("/bench", func(c *celeris.Context) error { return c.String(200, "OK") })
	s.GET("/json", func(c *celeris.Context) error { return c.Blob(200, "application/json", jsonBody) })
	s.GET("/users/:id/posts/:postId", func(c *celeris.Context) error {
		c.SetHeader("x-user", c.Param("id"))
		return c.String(200, c.Param("postId"))
	})
	s.Handler() // compose the chains
	srv := newServer(hook.Handler(s), Config{})
	srv.logger = slog.Default()
	srv.maxFieldSection = DefaultMaxFieldSectionSize
	srv.maxBody = DefaultMaxRequestBodySize
	srv.headerTimeout = time.Second
	return newConn(srv, nil)
}
