package celeris

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func tag(name string) MiddlewareFunc {
	return func(next HandlerFunc) HandlerFunc {
		return func(c *Context) error {
			v, _ := c.Get("trace")
			s, _ := v.(string)
			c.Set("trace", s+name+">")
			c.AddHeader("X-Order", name)
			return next(c)
		}
	}
}

func traceHandler(c *Context) error {
	v, _ := c.Get("trace")
	s, _ := v.(string)
	return c.String(200, s+"h")
}

func TestMiddlewareOrderAndGroups(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		api := s.Group("/api", tag("api"))
		v1 := api.Group("/v1", tag("v1"))
		v1.GET("/items/:id", traceHandler, tag("route"))
		v1.Use(tag("v1late"))
		s.Use(tag("global"))
		s.GET("/plain", traceHandler).Inline()
		s.NotFound(func(c *Context) error { return c.String(404, "custom 404") })
		s.MethodNotAllowed(func(c *Context) error {
			return c.String(405, "custom 405 allow="+c.ResponseHeader("Allow"))
		})
		s.Pre(func(next HandlerFunc) HandlerFunc {
			return func(c *Context) error {
				if strings.HasPrefix(c.Path(), "/old/") {
					c.SetPath("/api/v1/items/" + strings.TrimPrefix(c.Path(), "/old/"))
				}
				if m := c.Header("X-HTTP-Method-Override"); m != "" {
					c.SetMethod(m)
				}
				return next(c)
			}
		})
	})
	client := &http.Client{Timeout: 5 * time.Second}
	tests := []struct {
		method, path, override string
		status                 int
		body                   string
	}{
		{method: "GET", path: "/api/v1/items/3", status: 200, body: "global>api>v1>v1late>route>h"},
		{method: "GET", path: "/plain", status: 200, body: "global>h"},
		{method: "GET", path: "/old/3", status: 200, body: "global>api>v1>v1late>route>h"},
		{method: "GET", path: "/missing", status: 404, body: "custom 404"},
		{method: "POST", path: "/plain", status: 405, body: "custom 405 allow=GET, HEAD"},
		{method: "POST", path: "/plain", override: "GET", status: 200, body: "global>h"},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(tt.method, "http://"+addr+tt.path, nil)
		if tt.override != "" {
			req.Header.Set("X-HTTP-Method-Override", tt.override)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if body := bodyString(t, resp); resp.StatusCode != tt.status || body != tt.body {
			t.Errorf("%s %s: %d %q, want %d %q", tt.method, tt.path, resp.StatusCode, body, tt.status, tt.body)
		}
	}
}

func TestCapture(t *testing.T) {
	upper := func(next HandlerFunc) HandlerFunc {
		return func(c *Context) error {
			c.BeginCapture()
			err := next(c)
			status, body, ok := c.EndCapture()
			if !ok {
				return err
			}
			c.SetHeader("X-Captured", "1")
			return c.Blob(status, "", []byte(strings.ToUpper(string(body))))
		}
	}
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/t", func(c *Context) error { return c.String(201, "hello") }, upper, upper)
	})
	resp, err := http.Get("http://" + addr + "/t")
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); resp.StatusCode != 201 || body != "HELLO" || resp.Header.Get("X-Captured") != "1" {
		t.Fatalf("%d %q %v", resp.StatusCode, body, resp.Header)
	}
}

func TestRegistrationPanics(t *testing.T) {
	s := New(Config{})
	s.GET("/a/:id", traceHandler)
	for _, pattern := range []string{"/a/:name", "no-slash", "/a/:id"} {
		func() {
			defer func() {
				p := recover()
				if p == nil || !strings.Contains(p.(string), pattern) {
					t.Errorf("pattern %q: panic %v", pattern, p)
				}
			}()
			s.GET(pattern, traceHandler)
		}()
	}
}

type codedErr struct{ code int }

func (e codedErr) Error() string   { return "coded" }
func (e codedErr) StatusCode() int { return e.code }

// TestResultStatus: middleware sees the status the error handler will answer with.
func TestResultStatus(t *testing.T) {
	got := make(chan int, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.Use(func(next HandlerFunc) HandlerFunc {
			return func(c *Context) error {
				err := next(c)
				got <- c.ResultStatus(err)
				return err
			}
		})
		s.GET("/ok", func(c *Context) error { return c.String(201, "x") })
		s.GET("/http", func(c *Context) error { return NewHTTPError(418, "tea") })
		s.GET("/coded", func(c *Context) error { return codedErr{code: 413} })
		s.GET("/plain", func(c *Context) error { return io.EOF })
		s.GET("/none", func(c *Context) error { c.Status(202); return nil })
	})
	for path, want := range map[string]int{"/ok": 201, "/http": 418, "/coded": 413, "/plain": 500, "/none": 202} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if g := <-got; g != want {
			t.Errorf("%s: ResultStatus %d, want %d", path, g, want)
		}
		if resp.StatusCode != want {
			t.Errorf("%s: answered %d, ResultStatus said %d", path, resp.StatusCode, want)
		}
	}
}
