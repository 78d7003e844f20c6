package recovery_test

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/recovery"
)

var errBoom = errors.New("boom")

func TestRecovery(t *testing.T) {
	var logs, serverLogs mwtest.LogBuffer
	var gotValue any
	var mu sync.Mutex
	cfg := celeris.Config{Logger: slog.New(slog.NewTextHandler(&serverLogs, nil))}
	_, addr := mwtest.StartConfig(t, cfg, func(s *celeris.Server) {
		s.Use(recovery.New(recovery.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
		s.GET("/panic", func(c *celeris.Context) error { panic("kaboom") })
		s.GET("/panic-error", func(c *celeris.Context) error { panic(errBoom) })
		s.GET("/ok", func(c *celeris.Context) error { return c.String(200, "fine") })
		s.GET("/stream", func(c *celeris.Context) error {
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			_, _ = w.Write([]byte("partial"))
			panic("mid-stream")
		})
		custom := recovery.New(recovery.Config{
			Logger:       slog.New(slog.NewTextHandler(&logs, nil)),
			DisableStack: true,
			Handler: func(c *celeris.Context, p any) error {
				mu.Lock()
				gotValue = p
				mu.Unlock()
				c.SetHeader("X-Recovered", "yes")
				return celeris.NewHTTPError(http.StatusTeapot, "recovered")
			},
		})
		s.GET("/custom", func(c *celeris.Context) error { panic(42) }, custom)
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		url := "http://" + addr
		logs.Reset()
		serverLogs.Reset()
		resp, body := mwtest.Get(t, client, url+"/panic", nil)
		if resp.StatusCode != 500 || body != "Internal Server Error" {
			t.Fatalf("/panic: %d %q", resp.StatusCode, body)
		}
		out := logs.String()
		if strings.Count(out, "recovery: handler panic") != 1 || !strings.Contains(out, "kaboom") ||
			!strings.Contains(out, "recovery_test.go") || !strings.Contains(out, "path=/panic") {
			t.Errorf("log: %s", out)
		}
		if s := serverLogs.String(); strings.Contains(s, "panic") {
			t.Errorf("server logged the panic too: %s", s)
		}

		resp, body = mwtest.Get(t, client, url+"/panic-error", nil)
		if resp.StatusCode != 500 || body != "Internal Server Error" {
			t.Fatalf("/panic-error: %d %q", resp.StatusCode, body)
		}

		resp, body = mwtest.Get(t, client, url+"/ok", nil)
		if resp.StatusCode != 200 || body != "fine" {
			t.Fatalf("/ok: %d %q", resp.StatusCode, body)
		}

		logs.Reset()
		resp, body = mwtest.Get(t, client, url+"/custom", nil)
		if resp.StatusCode != http.StatusTeapot || body != "recovered" || resp.Header.Get("X-Recovered") != "yes" {
			t.Fatalf("/custom: %d %q %v", resp.StatusCode, body, resp.Header)
		}
		mu.Lock()
		if gotValue != 42 {
			t.Errorf("handler saw panic value %v", gotValue)
		}
		mu.Unlock()
		if out := logs.String(); strings.Count(out, "recovery: handler panic") != 1 || strings.Contains(out, "stack=") {
			t.Errorf("custom log: %s", out)
		}

		// A panic mid-stream cannot change the status; the connection survives.
		req, _ := http.NewRequest("GET", url+"/stream", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("/stream: status %d", resp.StatusCode)
			}
		}
		resp, body = mwtest.Get(t, client, url+"/ok", nil)
		if resp.StatusCode != 200 || body != "fine" {
			t.Fatalf("/ok after stream panic: %d %q", resp.StatusCode, body)
		}
	})
}

func TestPanicError(t *testing.T) {
	e := recovery.PanicError{Value: errBoom}
	if !errors.Is(e, errBoom) || e.Error() != "panic: boom" {
		t.Fatalf("%v", e)
	}
	if (recovery.PanicError{Value: "x"}).Unwrap() != nil {
		t.Fatal("non-error value unwraps")
	}
}
