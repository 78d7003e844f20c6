package celeris

import (
	"bytes"
	"net"
	"testing"

	"github.com/celeris-dev/celeris/internal/h1"
)

// fakeConn is an in-memory httpmsg.Conn for tests without network.
type fakeConn struct {
	out    []byte
	closed bool
	woken  int
}

func (f *fakeConn) Write(b []byte)       { f.out = append(f.out, b...) }
func (f *fakeConn) Wake()                { f.woken++ }
func (f *fakeConn) Close()               { f.closed = true }
func (f *fakeConn) RemoteAddr() net.Addr { return fakeAddr }

var fakeAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1234}

func containsBody(out []byte, s string) bool { return bytes.Contains(out, []byte(s)) }

// benchServer has inline routes that allocate nothing themselves.
func benchServer() *Server {
	s := New(Config{})
	s.GET("/bench", func(c *Context) error { return c.String(200, "OK") }).Inline()
	s.GET("/users/:id/posts/:postId", func(c *Context) error {
		return c.String(200, c.Param("id"))
	}).Inline()
	s.freeze()
	return s
}

// BenchmarkServeH1 measures the full HTTP/1.1 cycle without network.
func BenchmarkServeH1(b *testing.B) {
	for _, bc := range []struct{ name, req string }{
		{name: "bench", req: "GET /bench HTTP/1.1\r\nHost: example.com\r\nUser-Agent: wrk\r\n\r\n"},
		{name: "params", req: "GET /users/42/posts/7 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: wrk\r\n\r\n"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := benchServer()
			fc := &fakeConn{}
			cn := h1.NewConn(fc, &s.h1cfg)
			req := []byte(bc.req)
			b.ReportAllocs()
			b.SetBytes(int64(len(req)))
			for b.Loop() {
				fc.out = fc.out[:0]
				if n, err := cn.OnData(req); n != len(req) || err != nil {
					b.Fatal(n, err)
				}
			}
		})
	}
}
