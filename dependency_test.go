package celeris

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

// TestDependencyError: a *DependencyError, wrapped or not, is answered 503 by the
// default error handler and logged once unless it was logged where it arose;
// errors.Is finds ErrDependency, errors.As an *HTTPError of 503 and the cause.
func TestDependencyError(t *testing.T) {
	cause := errors.New("dial tcp 127.0.0.1:6379: connection refused")
	var logs lockedBuffer
	_, addr := startServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, func(s *Server) {
		s.GET("/store", func(c *Context) error {
			return fmt.Errorf("load: %w", &DependencyError{Name: "session store", Err: cause})
		})
		s.GET("/logged", func(c *Context) error {
			return &DependencyError{Name: "ratelimit store", Err: cause, Logged: true}
		})
	})
	for _, tt := range []struct{ path, log string }{
		{path: "/store", log: `level=ERROR msg="celeris: handler error" method=GET path=/store status=503 error="celeris: session store unavailable: dial tcp`},
		{path: "/logged"},
	} {
		before := logs.String()
		code, body := rawGet(t, addr, tt.path)
		if code != http.StatusServiceUnavailable || body != "Service Unavailable" {
			t.Errorf("%s: %d %q, want 503 Service Unavailable", tt.path, code, body)
		}
		logged := strings.TrimPrefix(logs.String(), before)
		if n := strings.Count(logged, "\n"); tt.log == "" && n != 0 || tt.log != "" && (n != 1 || !strings.Contains(logged, tt.log)) {
			t.Errorf("%s: logged %q, want %q", tt.path, logged, tt.log)
		}
	}

	err := fmt.Errorf("wrapped: %w", &DependencyError{Name: "db", Err: cause})
	var he *HTTPError
	var de *DependencyError
	switch {
	case !errors.Is(err, ErrDependency):
		t.Error("errors.Is(err, ErrDependency) = false")
	case !errors.Is(err, cause):
		t.Error("errors.Is(err, cause) = false")
	case !errors.As(err, &he) || he.Code != http.StatusServiceUnavailable:
		t.Errorf("errors.As HTTPError: %v", he)
	case !errors.As(he, &de) || de.Name != "db" || !errors.Is(he, ErrDependency):
		t.Errorf("the HTTPError's cause is not the DependencyError: %v", he.Err)
	case errorStatus(err) != http.StatusServiceUnavailable:
		t.Errorf("errorStatus = %d", errorStatus(err))
	case errors.Is(errors.New("x"), ErrDependency):
		t.Error("any error is ErrDependency")
	}
}
