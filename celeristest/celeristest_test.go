package celeristest_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
)

type key struct{}

func newServer() *celeris.Server {
	s := celeris.New(celeris.Config{})
	s.Use(func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			c.SetHeader("X-Mw", "yes")
			return next(c)
		}
	})
	s.GET("/users/:id", func(c *celeris.Context) error {
		return c.JSON(200, map[string]string{"id": c.Param("id"), "q": c.Query("q"), "host": c.Host(),
			"auth": c.Header("Authorization"), "remote": c.RemoteAddr().String()})
	})
	s.POST("/echo", func(c *celeris.Context) error {
		b, err := c.Body()
		if err != nil {
			return err
		}
		var tr []string
		c.VisitTrailers(func(n, v string) { tr = append(tr, n+"="+v) })
		return c.String(201, string(b)+"|"+strings.Join(tr, ","))
	})
	s.GET("/stream", func(c *celeris.Context) error {
		w, err := c.Stream(200, "text/plain")
		if err != nil {
			return err
		}
		w.Write([]byte("a"))
		w.Flush()
		w.Write([]byte("b"))
		return nil
	})
	s.GET("/ctx", func(c *celeris.Context) error {
		v, _ := c.Context().Value(key{}).(string)
		return c.String(200, v)
	})
	s.GET("/teapot", func(c *celeris.Context) error { return celeris.NewHTTPError(418, "no coffee") })
	s.GET("/none", func(c *celeris.Context) error { return c.NoContent(204) })
	return s
}

func TestDo(t *testing.T) {
	s := newServer()
	resp := celeristest.Do(s, celeristest.NewRequest("GET", "/users/7?q=x", nil).WithHeader("Authorization", "Bearer t"))
	var got map[string]string
	if err := resp.DecodeJSON(&got); err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || got["id"] != "7" || got["q"] != "x" || got["host"] != "example.com" ||
		got["auth"] != "Bearer t" || got["remote"] != "192.0.2.1:1234" {
		t.Errorf("%d %v", resp.Status, got)
	}
	if resp.Header.Get("X-Mw") != "yes" || resp.Header.Get("Content-Type") != "application/json" ||
		resp.Header.Get("Content-Length") != strconv.Itoa(len(resp.Body)) || resp.Streamed {
		t.Errorf("header %v streamed %v", resp.Header, resp.Streamed)
	}

	req := celeristest.NewRequest("POST", "http://api.test/echo", strings.NewReader("body"))
	req.Trailer = http.Header{"X-Sum": {"1"}}
	resp = celeristest.Do(s, req)
	if resp.Status != 201 || resp.Text() != "body|X-Sum=1" {
		t.Errorf("echo: %d %q", resp.Status, resp.Text())
	}

	resp = celeristest.Do(s, celeristest.NewRequest("GET", "/stream", nil))
	if !resp.Streamed || resp.Flushes != 1 || resp.Text() != "ab" || resp.Header.Get("Content-Length") != "" {
		t.Errorf("stream: %+v", resp)
	}

	resp = celeristest.Do(s, celeristest.NewRequest("GET", "/ctx", nil).WithContext(context.WithValue(context.Background(), key{}, "v")))
	if resp.Text() != "v" {
		t.Errorf("ctx: %q", resp.Text())
	}

	for _, tt := range []struct {
		method, target string
		status         int
		body           string
	}{
		{method: "GET", target: "/teapot", status: 418, body: "no coffee"},
		{method: "GET", target: "/missing", status: 404, body: "Not Found"},
		{method: "DELETE", target: "/users/1", status: 405, body: "Method Not Allowed"},
		{method: "HEAD", target: "/users/1", status: 200, body: ""},
		{method: "GET", target: "/none", status: 204, body: ""},
	} {
		resp := celeristest.Do(s, celeristest.NewRequest(tt.method, tt.target, nil))
		if resp.Status != tt.status || resp.Text() != tt.body {
			t.Errorf("%s %s: %d %q", tt.method, tt.target, resp.Status, resp.Text())
		}
		if tt.method == "HEAD" && resp.Header.Get("Content-Length") == "0" {
			t.Error("HEAD lost the Content-Length of the GET body")
		}
	}
}

func TestRun(t *testing.T) {
	h := func(c *celeris.Context) error {
		return c.String(200, c.Method()+" "+c.Path()+" "+c.Param("path"))
	}
	resp := celeristest.Run(h, celeristest.NewRequest("PATCH", "/a/b", nil))
	if resp.Status != 200 || resp.Text() != "PATCH /a/b a/b" {
		t.Errorf("%d %q", resp.Status, resp.Text())
	}
	resp = celeristest.Run(h, celeristest.NewRequest("GET", "/", nil))
	if resp.Status != 200 || resp.Text() != "GET / " {
		t.Errorf("root: %d %q", resp.Status, resp.Text())
	}

	byID := func(c *celeris.Context) error { return c.String(200, "id="+c.Param("id")) }
	resp = celeristest.RunRoute("/users/:id", byID, celeristest.NewRequest("GET", "/users/42", nil))
	if resp.Text() != "id=42" {
		t.Errorf("route: %q", resp.Text())
	}
	resp = celeristest.RunRoute("/users/:id", byID, celeristest.NewRequest("GET", "/other", nil))
	if resp.Status != 404 {
		t.Errorf("unmatched: %d", resp.Status)
	}

	deny := func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error { return celeris.NewHTTPError(403, "denied") }
	}
	resp = celeristest.Run(byID, celeristest.NewRequest("GET", "/x", nil), deny)
	if resp.Status != 403 || resp.Text() != "denied" {
		t.Errorf("middleware: %d %q", resp.Status, resp.Text())
	}

	failing := func(c *celeris.Context) error { return errors.New("internal detail") }
	resp = celeristest.Run(failing, celeristest.NewRequest("GET", "/", nil))
	if resp.Status != 500 || strings.Contains(resp.Text(), "internal detail") {
		t.Errorf("error: %d %q", resp.Status, resp.Text())
	}
}

func TestAdaptedHandler(t *testing.T) {
	h := celeris.AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-From", "net/http")
		w.Write([]byte("hi " + r.PathValue("name")))
	})
	resp := celeristest.RunRoute("/hi/:name", h, celeristest.NewRequest("GET", "/hi/bob", nil))
	if resp.Text() != "hi bob" || resp.Header.Get("X-From") != "net/http" {
		t.Errorf("%q %v", resp.Text(), resp.Header)
	}
}

func TestInvalidTargetPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	celeristest.Run(func(c *celeris.Context) error { return nil }, celeristest.NewRequest("GET", "no-slash", nil))
}

// TestInvalidStatusAsOnTheWire: celeristest reports what a connection sends for
// a status no final response may have: 500, as a real connection answers, not
// the code itself.
func TestInvalidStatusAsOnTheWire(t *testing.T) {
	s := celeris.New(celeris.Config{Logger: slog.New(slog.DiscardHandler)})
	s.GET("/:code", func(c *celeris.Context) error {
		code, _ := strconv.Atoi(c.Param("code"))
		return c.String(code, "x")
	})
	for _, code := range []string{"42", "101", "1000"} {
		if resp := celeristest.Do(s, celeristest.NewRequest("GET", "/"+code, nil)); resp.Status != 500 {
			t.Errorf("String(%s): status %d, want 500", code, resp.Status)
		}
	}
}

// TestHeaderValidationAsOnTheWire: a response field a connection drops (a value
// with CR or LF, a name that is not a token) is dropped by celeristest too, so a
// test never passes on a header that no client would receive.
func TestHeaderValidationAsOnTheWire(t *testing.T) {
	resp := celeristest.Run(func(c *celeris.Context) error {
		c.SetHeader("X-Split", "a\r\nInjected: 1")
		c.SetHeader("X-Nul", "a\x00b")
		c.SetHeader("Bad Name", "v")
		c.SetHeader("X-Ok", "fine")
		return c.String(200, "ok")
	}, celeristest.NewRequest("GET", "/", nil))
	for _, name := range []string{"X-Split", "Injected", "X-Nul", "Bad Name"} {
		if v, ok := resp.Header[name]; ok {
			t.Errorf("header %q = %q: the wire drops it", name, v)
		}
	}
	if resp.Header.Get("X-Ok") != "fine" {
		t.Errorf("X-Ok = %q", resp.Header.Get("X-Ok"))
	}
}

// An https target gets a stand-in TLS state, as from httptest.NewRequest; any
// other target none.
func TestTLSTarget(t *testing.T) {
	h := func(c *celeris.Context) error {
		if st := c.TLS(); st != nil {
			return c.String(200, c.Scheme()+" "+st.ServerName)
		}
		return c.String(200, c.Scheme()+" plain")
	}
	for target, want := range map[string]string{
		"https://api.test:8443/x": "https api.test",
		"http://api.test/x":       "http plain",
		"/x":                      "http plain",
	} {
		if got := string(celeristest.Run(h, celeristest.NewRequest("GET", target, nil)).Body); got != want {
			t.Errorf("%s: %q, want %q", target, got, want)
		}
	}
}
