package celeris

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestDefaultErrorHandlerLogsCause: an *HTTPError's Err is logged once (Error level
// for 5xx, Debug below), never sent; one without Err logs nothing.
func TestDefaultErrorHandlerLogsCause(t *testing.T) {
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	_, addr := startServer(t, Config{Logger: logger}, func(s *Server) {
		s.GET("/tmpl", func(c *Context) error {
			return &HTTPError{Code: http.StatusInternalServerError, Err: errors.New("template: page:3: bad pipeline")}
		})
		s.GET("/bad", func(c *Context) error {
			return &HTTPError{Code: http.StatusBadRequest, Message: "nope", Err: errors.New("client cause")}
		})
		s.GET("/plain", func(c *Context) error { return NewHTTPError(http.StatusConflict, "busy") })
		s.GET("/logged", func(c *Context) error {
			return &HTTPError{Code: http.StatusInternalServerError, Err: fmt.Errorf("wrapped: %w", loggedErr{})}
		})
	})
	tests := []struct {
		name, path, body, log string
		code                  int
	}{
		{name: "5xx cause", path: "/tmpl", code: 500, body: "Internal Server Error", log: `level=ERROR msg="celeris: handler error" method=GET path=/tmpl status=500 error="template: page:3: bad pipeline"`},
		{name: "4xx cause", path: "/bad", code: 400, body: "nope", log: `level=DEBUG msg="celeris: handler error" method=GET path=/bad status=400 error="client cause"`},
		{name: "no cause", path: "/plain", code: 409, body: "busy"},
		{name: "logged where it arose", path: "/logged", code: 500, body: "Internal Server Error"},
	}
	for _, tt := range tests {
		before := strings.Count(logs.String(), "\n")
		code, body := rawGet(t, addr, tt.path)
		if code != tt.code || body != tt.body {
			t.Errorf("%s: %d %q, want %d %q", tt.name, code, body, tt.code, tt.body)
		}
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")[before:]
		switch {
		case tt.log == "" && len(lines) > 0 && lines[0] != "":
			t.Errorf("%s: logged %q", tt.name, lines)
		case tt.log != "" && (len(lines) != 1 || !strings.Contains(lines[0], tt.log)):
			t.Errorf("%s: log %q, want one line with %q", tt.name, lines, tt.log)
		}
	}
}

// TestHTTPErrorString: the cause is printed once, also when the message quotes it.
func TestHTTPErrorString(t *testing.T) {
	cause := errors.New("page (query): invalid integer \"x\"")
	tests := []struct {
		name string
		err  *HTTPError
		want string
	}{
		{name: "message and cause", err: &HTTPError{Code: 500, Message: "render failed", Err: errors.New("boom")}, want: "500 render failed: boom"},
		{name: "status text", err: &HTTPError{Code: 404}, want: "404 Not Found"},
		{name: "status text and cause", err: &HTTPError{Code: 403, Err: errors.New("denied")}, want: "403 Forbidden: denied"},
		{name: "message quotes cause", err: &HTTPError{Code: 400, Message: "invalid request: " + cause.Error(), Err: cause}, want: `400 invalid request: page (query): invalid integer "x"`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
	// A bind failure, as the handler gets it.
	_, addr := startServer(t, Config{ErrorHandler: func(c *Context, err error) {
		_ = c.String(400, err.Error())
	}}, func(s *Server) {
		s.GET("/", func(c *Context) error {
			var p Paging
			return c.BindQuery(&p)
		})
	})
	code, body := rawGet(t, addr, "/?page=x")
	if want := `400 invalid request: page (query): invalid integer "x"`; code != 400 || body != want {
		t.Errorf("bind failure: %d %q, want %q", code, body, want)
	}
}

// loggedErr says it was logged where it arose (as recovery's PanicError).
type loggedErr struct{}

func (loggedErr) Error() string { return "logged already" }
func (loggedErr) Logged() bool  { return true }
