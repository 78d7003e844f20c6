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
	serve, fc := inlineServe(t, s, []byte("GET /api/users/42 HTTP/1.1\r\nHost: example.com\r\n\r\n"))
	serve()
	if !containsBody(fc.out, "X-Pass: 1") {
		t.Fatalf("response %q", fc.out)
	}
	if a := testing.AllocsPerRun(1000, serve); a != 0 {
		t.Fatalf("allocs per request with middleware = %v, want 0", a)
	}
}

// TestSetHeaderBytes: the value is copied (the caller's buffer may change once the
// call returns) and, once the Context's buffer has grown, nothing is allocated.
func TestSetHeaderBytes(t *testing.T) {
	s := New(Config{})
	n := 0
	s.GET("/", func(c *Context) error {
		n++
		var b [8]byte
		v := c.SetHeaderBytes("X-N", append(b[:0], "id-"...))
		v2 := c.SetHeaderBytes("X-M", append(b[:0], byte('0'+n%10)))
		b[0] = '!' // the stored values are copies
		if v != "id-" || c.ResponseHeader("X-M") != v2 {
			t.Errorf("stored %q %q", v, v2)
		}
		return c.String(200, "ok")
	}).Inline()
	s.freeze()
	serve, fc := inlineServe(t, s, []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"))
	serve()
	if !containsBody(fc.out, "X-N: id-\r\nX-M: 1\r\n") {
		t.Fatalf("response %q", fc.out)
	}
	serve()
	if !containsBody(fc.out, "X-N: id-\r\nX-M: 2\r\n") {
		t.Fatalf("second response %q", fc.out)
	}
	if a := testing.AllocsPerRun(1000, serve); a != 0 {
		t.Fatalf("allocs per request = %v, want 0", a)
	}
}

// TestContextBufferAllocs: a body built in Context.Buffer costs no allocation once
// the buffer has grown.
func TestContextBufferAllocs(t *testing.T) {
	s := New(Config{})
	s.GET("/users/:id", func(c *Context) error {
		b := c.Buffer()
		b.WriteString("user=")
		b.WriteString(c.Param("id"))
		return c.Blob(200, "text/plain; charset=utf-8", b.Bytes())
	}).Inline()
	s.freeze()
	serve, fc := inlineServe(t, s, []byte("GET /users/42 HTTP/1.1\r\nHost: example.com\r\n\r\n"))
	serve()
	if !containsBody(fc.out, "\r\n\r\nuser=42") {
		t.Fatalf("response %q", fc.out)
	}
	if a := testing.AllocsPerRun(1000, serve); a != 0 {
		t.Fatalf("allocs per request = %v, want 0", a)
	}
}
