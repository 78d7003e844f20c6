//go:build !race

package celeris

import (
	"testing"

	"github.com/celeris-dev/celeris/internal/h1"
)

// TestServeH1Allocs: a full HTTP/1.1 GET cycle without network (raw bytes in,
// parser, router, Context, handler, response bytes out) allocates nothing.
func TestServeH1Allocs(t *testing.T) {
	s := benchServer()
	fc := &fakeConn{}
	cn := h1.NewConn(fc, &s.h1cfg)
	req := []byte("GET /users/42/posts/7 HTTP/1.1\r\nHost: example.com\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n")
	serve := func() {
		fc.out = fc.out[:0]
		n, err := cn.OnData(req)
		if n != len(req) || err != nil {
			t.Fatalf("OnData = %d, %v", n, err)
		}
	}
	serve()
	if want := "\r\n\r\n42"; !containsBody(fc.out, want) {
		t.Fatalf("response %q lacks %q", fc.out, want)
	}
	if a := testing.AllocsPerRun(1000, serve); a != 0 {
		t.Fatalf("allocs per request = %v, want 0", a)
	}
}

func TestRouteLookupAllocs(t *testing.T) {
	s := benchServer()
	c := &Context{server: s}
	a := testing.AllocsPerRun(1000, func() {
		c.params.Reset()
		if r, _, _ := s.router.Lookup("GET", "/users/42/posts/7", &c.params); r == nil {
			t.Fatal("no route")
		}
	})
	if a != 0 {
		t.Fatalf("allocs per lookup = %v, want 0", a)
	}
}

// TestServeH1AllocsWithMiddleware: composed middleware chains add no allocation.
func TestServeH1AllocsWithMiddleware(t *testing.T) {
	s := New(Config{})
	pass := func(next HandlerFunc) HandlerFunc {
		return func(c *Context) error {
			c.SetHeader("X-Pass", "1")
			return next(c)
		}
	}
	s.Use(pass, pass)
	g := s.Group("/api", pass)
	g.GET("/users/:id", func(c *Context) error { return c.String(200, c.Param("id")) }, pass).Inline()
	s.freeze()
	fc := &fakeConn{}
	cn := h1.NewConn(fc, &s.h1cfg)
	req := []byte("GET /api/users/42 HTTP/1.1\r\nHost: example.com\r\n\r\n")
	serve := func() {
		fc.out = fc.out[:0]
		if n, err := cn.OnData(req); n != len(req) || err != nil {
			t.Fatalf("OnData = %d, %v", n, err)
		}
	}
	serve()
	if !containsBody(fc.out, "X-Pass: 1") {
		t.Fatalf("response %q", fc.out)
	}
	if a := testing.AllocsPerRun(1000, serve); a != 0 {
		t.Fatalf("allocs per request with middleware = %v, want 0", a)
	}
}
