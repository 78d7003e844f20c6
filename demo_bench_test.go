package celeris_test

import (
	"bytes"
	"net"
	"net/http"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/cors"
	"github.com/celeris-dev/celeris/middleware/metrics"
	"github.com/celeris-dev/celeris/middleware/requestid"
)

// memConn is an in-memory connection: output is appended to out.
type memConn struct{ out []byte }

func (m *memConn) Write(b []byte)       { m.out = append(m.out, b...) }
func (m *memConn) Wake()                {}
func (m *memConn) Close()               {}
func (m *memConn) RemoteAddr() net.Addr { return memAddr }

var memAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}

// BenchmarkServeDemoStack measures the full HTTP/1.1 cycle without network
// (bytes in, response bytes out) for the demo's inline routes, bare and behind the
// demo's middleware (request id, CORS, metrics), one request per call and 16
// pipelined. It is the user-space part of the HTTP/1.1 comparison with fasthttp
// (docs/BENCHMARKS.md §2); bench/scripts/instr.sh counts its instructions.
func BenchmarkServeDemoStack(b *testing.B) {
	type msg struct {
		Message string `json:"message"`
	}
	build := func(mw []celeris.MiddlewareFunc) *celeris.Server {
		s := celeris.New(celeris.Config{})
		s.Use(mw...)
		s.GET("/bench", func(c *celeris.Context) error { return c.String(http.StatusOK, "OK") }).Inline()
		s.GET("/json", func(c *celeris.Context) error {
			return c.JSON(http.StatusOK, msg{Message: "Hello, World!"})
		}).Inline()
		s.GET("/users/:id/posts/:postId", func(c *celeris.Context) error {
			b := c.Buffer() // as cmd/demo
			b.WriteString("user=")
			b.WriteString(c.Param("id"))
			b.WriteString(" post=")
			b.WriteString(c.Param("postId"))
			return c.Blob(http.StatusOK, "text/plain; charset=utf-8", b.Bytes())
		}).Inline()
		return s
	}
	rid := func() celeris.MiddlewareFunc { return requestid.New(requestid.Config{ContextKey: "-"}) }
	met := func() celeris.MiddlewareFunc { return metrics.New(metrics.Config{}).Middleware() }
	for _, stack := range []struct {
		name string
		mw   func() []celeris.MiddlewareFunc
	}{
		{"bare", func() []celeris.MiddlewareFunc { return nil }},
		{"middleware", func() []celeris.MiddlewareFunc {
			return []celeris.MiddlewareFunc{rid(), cors.New(cors.Config{}), met()}
		}},
		{"requestid", func() []celeris.MiddlewareFunc { return []celeris.MiddlewareFunc{rid()} }},
		{"cors", func() []celeris.MiddlewareFunc { return []celeris.MiddlewareFunc{cors.New(cors.Config{})} }},
		{"metrics", func() []celeris.MiddlewareFunc { return []celeris.MiddlewareFunc{met()} }},
	} {
		for _, path := range []string{"/bench", "/json", "/users/1/posts/2"} {
			for _, n := range []int{1, 16} {
				name := stack.name + path + map[int]string{1: "/single", 16: "/pipelined16"}[n]
				b.Run(name, func(b *testing.B) {
					s := build(stack.mw())
					mc := &memConn{}
					cn := celeris.NewH1ConnForTest(s, mc)
					// What wrk sends.
					req := bytes.Repeat([]byte("GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\r\n"), n)
					b.ReportAllocs()
					for b.Loop() {
						mc.out = mc.out[:0]
						if k, err := cn.OnData(req); k != len(req) || err != nil {
							b.Fatal(k, err)
						}
					}
					if !bytes.Contains(mc.out, []byte("200 OK")) {
						b.Fatalf("%q", mc.out)
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/req")
				})
			}
		}
	}
}
