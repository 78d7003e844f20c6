package celeris

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRedirectFixedPath(t *testing.T) {
	t.Parallel()
	register := func(s *Server) {
		s.GET("/users", func(c *Context) error { return c.String(200, "users") })
		s.POST("/users", func(c *Context) error { return c.String(200, "posted") })
		s.GET("/docs/", func(c *Context) error { return c.String(200, "docs") })
		s.GET("/a/c", func(c *Context) error { return c.String(200, "ac") })
	}
	_, off := startServer(t, Config{}, register)
	_, on := startServer(t, Config{RedirectTrailingSlash: true, CleanPath: true}, register)
	_, slashOnly := startServer(t, Config{RedirectTrailingSlash: true}, register)
	tests := []struct {
		name, addr, method, target string
		status                     int
		location                   string
	}{
		{"off", off, "GET", "/users/", 404, ""},
		{"off clean", off, "GET", "/a/./c", 404, ""},
		{"drop slash", on, "GET", "/users/?x=1", 301, "/users?x=1"},
		{"add slash", on, "GET", "/docs", 301, "/docs/"},
		{"head", on, "HEAD", "/docs", 301, "/docs/"},
		{"post keeps method", on, "POST", "/users/", 308, "/users"},
		{"clean", on, "GET", "/a/./b/../c", 301, "/a/c"},
		{"clean double slash", on, "GET", "/a//c", 301, "/a/c"},
		{"clean and slash", on, "GET", "/x/../users/", 301, "/users"},
		{"no route either way", on, "GET", "/nope/", 404, ""},
		{"exact match untouched", on, "GET", "/users", 200, ""},
		{"slash only: no clean", slashOnly, "GET", "/a/./c", 404, ""},
		{"no open redirect", slashOnly, "GET", "//users/", 404, ""},
	}
	for _, tt := range tests {
		r := dialRaw(t, tt.addr)
		r.send(tt.method + " " + tt.target + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
		resp := r.readResponse(tt.method)
		if resp.StatusCode != tt.status || resp.Header.Get("Location") != tt.location {
			t.Errorf("%s: %s %s = %d %q, want %d %q", tt.name, tt.method, tt.target, resp.StatusCode, resp.Header.Get("Location"), tt.status, tt.location)
		}
	}
	// Over HTTP/2 too, through the client that follows the redirect.
	cl := h2cClient()
	defer cl.CloseIdleConnections()
	resp, err := cl.Get("http://" + on + "/users/")
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); body != "users" || resp.Request.URL.Path != "/users" {
		t.Errorf("h2c: %q at %s", body, resp.Request.URL.Path)
	}
}

func TestNamedRoutes(t *testing.T) {
	s := New(Config{})
	h := func(c *Context) error { return nil }
	s.GET("/todos/:id", h).Name("todo")
	api := s.Group("/api")
	api.GET("/users/:uid/files/*path", h).Name("file")
	s.POST("/todos", h)
	tests := []struct {
		name   string
		params []any
		want   string
	}{
		{"todo", []any{42}, "/todos/42"},
		{"todo", []any{"a b/c"}, "/todos/a%20b%2Fc"},
		{"file", []any{7, "docs/read me.txt"}, "/api/users/7/files/docs/read%20me.txt"},
		{"todo", nil, ""},
		{"todo", []any{1, 2}, ""},
		{"missing", nil, ""},
	}
	for _, tt := range tests {
		if got := s.URL(tt.name, tt.params...); got != tt.want {
			t.Errorf("URL(%q, %v) = %q, want %q", tt.name, tt.params, got, tt.want)
		}
	}
	want := []RouteInfo{
		{Method: "GET", Pattern: "/todos/:id", Name: "todo"},
		{Method: "GET", Pattern: "/api/users/:uid/files/*path", Name: "file"},
		{Method: "POST", Pattern: "/todos"},
	}
	got := s.Routes()
	if len(got) != len(want) {
		t.Fatalf("Routes() = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Routes()[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate name did not panic")
		}
	}()
	s.POST("/x", h).Name("todo")
}

// TestStartListener: a server serves a listener the caller opened (as
// http.Server.Serve), over HTTP/1.1 and h2c, on the std engine; Shutdown closes
// it. The gnet engine cannot adopt a listener and says so.
func TestStartListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{})
	s.GET("/hello", func(c *Context) error { return c.String(200, "hello "+c.Proto()) })
	errc := make(chan error, 1)
	go func() { errc <- s.StartListener(ln) }()
	select {
	case <-s.Ready():
	case err := <-errc:
		t.Fatal(err)
	}
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		resp, err := cl.Get("http://" + ln.Addr().String() + "/hello")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(string(b), "hello HTTP/") {
			t.Fatalf("%d %q", resp.StatusCode, b)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("the listener still accepts after Shutdown")
	}
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln2.Close()
	if err := New(Config{Engine: EngineGnet}).StartListener(ln2); !errors.Is(err, ErrListenerNotSupported) {
		t.Fatalf("StartListener on gnet = %v", err)
	}
}
