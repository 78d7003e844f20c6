package celeris

import (
	"net/http"
	"testing"
)

// RFC 9110 §9.3.7: OPTIONS asks which methods a resource supports. On a path with
// routes but no OPTIONS route the server answers 204 with Allow (listing OPTIONS),
// through the Use middleware; an OPTIONS route answers instead; a path without
// routes gets 404; Config.DisableAutoOptions restores 405. Over HTTP/1.1 and h2c.
func TestAutoOptions(t *testing.T) {
	register := func(s *Server) {
		s.Use(func(next HandlerFunc) HandlerFunc {
			return func(c *Context) error {
				c.SetHeader("X-Use", "ran")
				return next(c)
			}
		})
		s.GET("/bench", func(c *Context) error { return c.String(200, "OK") })
		s.POST("/bench", func(c *Context) error { return c.String(200, "OK") })
		s.GET("/users/:id", func(c *Context) error { return c.String(200, "user") })
		s.PUT("/own", func(c *Context) error { return c.String(200, "put") })
		s.OPTIONS("/own", func(c *Context) error { return c.String(200, "own options") })
	}
	_, on := startServer(t, Config{}, register)
	_, off := startServer(t, Config{DisableAutoOptions: true}, register)
	tests := []struct {
		name, addr, method, path string
		status                   int
		allow, body              string
	}{
		{name: "GET route", addr: on, method: "OPTIONS", path: "/bench", status: 204, allow: "GET, HEAD, OPTIONS, POST"},
		{name: "param route", addr: on, method: "OPTIONS", path: "/users/7", status: 204, allow: "GET, HEAD, OPTIONS"},
		{name: "OPTIONS route", addr: on, method: "OPTIONS", path: "/own", status: 200, body: "own options"},
		{name: "no route", addr: on, method: "OPTIONS", path: "/nowhere", status: 404},
		{name: "405", addr: on, method: "DELETE", path: "/bench", status: 405, allow: "GET, HEAD, POST"},
		{name: "off: 405", addr: off, method: "OPTIONS", path: "/bench", status: 405, allow: "GET, HEAD, POST"},
		{name: "off: OPTIONS route", addr: off, method: "OPTIONS", path: "/own", status: 200, body: "own options"},
	}
	forEachProto(t, func(t *testing.T, c *http.Client, proto string) {
		for _, tt := range tests {
			req, err := http.NewRequest(tt.method, "http://"+tt.addr+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			wantProto(t, resp, proto)
			body := bodyString(t, resp)
			if resp.StatusCode != tt.status || resp.Header.Get("Allow") != tt.allow || (tt.body != "" && body != tt.body) {
				t.Errorf("%s: %d Allow %q body %q, want %d Allow %q", tt.name, resp.StatusCode, resp.Header.Get("Allow"), body, tt.status, tt.allow)
			}
			if resp.Header.Get("X-Use") != "ran" {
				t.Errorf("%s: the Use middleware did not run", tt.name)
			}
			if tt.status == 204 && (body != "" || resp.Header.Get("Content-Length") != "") {
				t.Errorf("%s: 204 with body %q, Content-Length %q", tt.name, body, resp.Header.Get("Content-Length"))
			}
		}
	})
}
