package timeout_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/timeout"
)

func TestTimeout(t *testing.T) {
	const limit = 200 * time.Millisecond
	before := func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			c.SetHeader("X-Before", "kept")
			return next(c)
		}
	}
	// The handlers that go on after their deadline say when they return: the
	// answer must not come before (the middleware runs them on the request's
	// goroutine and answers when they return).
	returned := map[string]*atomic.Bool{"/overrun": new(atomic.Bool), "/stream": new(atomic.Bool)}
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(before)
		g := s.Group("", timeout.New(timeout.Config{Timeout: limit, Message: "too slow"}))
		g.GET("/fast", func(c *celeris.Context) error {
			if _, ok := c.Context().Deadline(); !ok {
				return c.String(500, "no deadline")
			}
			c.SetHeader("X-Handler", "1")
			return c.String(201, "fast")
		})
		g.GET("/aware", func(c *celeris.Context) error {
			select {
			case <-c.Context().Done():
				return c.Context().Err()
			case <-time.After(10 * time.Second):
				return c.String(200, "late")
			}
		})
		g.GET("/overrun", func(c *celeris.Context) error {
			<-c.Context().Done() // it answers after its deadline, on purpose
			c.SetHeader("X-Handler", "1")
			defer returned["/overrun"].Store(true)
			return c.String(200, "late")
		})
		g.GET("/error", func(c *celeris.Context) error { return celeris.NewHTTPError(409, "conflict") })
		g.GET("/stream", func(c *celeris.Context) error {
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			_, _ = w.Write([]byte("streamed"))
			<-c.Context().Done() // it goes on after its deadline, on purpose
			returned["/stream"].Store(true)
			return nil
		})
		s.GET("/custom", func(c *celeris.Context) error {
			<-c.Context().Done()
			return nil
		}, timeout.New(timeout.Config{
			Timeout: limit / 2,
			OnTimeout: func(c *celeris.Context) error {
				return c.JSON(http.StatusGatewayTimeout, map[string]string{"error": "timeout"})
			},
		}))
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		url := "http://" + addr
		tests := []struct {
			path          string
			status        int
			body          string
			handlerHeader string
			minTime       time.Duration
			maxTime       time.Duration
		}{
			// maxTime bounds are loose: they tell "answered near the deadline" from
			// "waited for the handler's 10 s", on a busy machine too.
			{path: "/fast", status: 201, body: "fast", handlerHeader: "1"},
			{path: "/aware", status: 503, body: "too slow", minTime: limit, maxTime: 30 * limit},
			{path: "/overrun", status: 503, body: "too slow", minTime: limit},
			{path: "/error", status: 409, body: "conflict"},
			{path: "/stream", status: 200, body: "streamed", minTime: limit},
			{path: "/custom", status: 504, body: `{"error":"timeout"}`, minTime: limit / 2, maxTime: 30 * limit},
		}
		for _, tt := range tests {
			if r := returned[tt.path]; r != nil {
				r.Store(false)
			}
			start := time.Now()
			resp, body := mwtest.Get(t, client, url+tt.path, nil)
			elapsed := time.Since(start)
			if r := returned[tt.path]; r != nil && !r.Load() {
				t.Errorf("%s: answered before the handler returned", tt.path)
			}
			if resp.StatusCode != tt.status || body != tt.body {
				t.Errorf("%s: %d %q, want %d %q", tt.path, resp.StatusCode, body, tt.status, tt.body)
			}
			if got := resp.Header.Get("X-Handler"); got != tt.handlerHeader {
				t.Errorf("%s: X-Handler %q, want %q", tt.path, got, tt.handlerHeader)
			}
			if resp.Header.Get("X-Before") != "kept" {
				t.Errorf("%s: header set before the middleware lost", tt.path)
			}
			if elapsed < tt.minTime || (tt.maxTime > 0 && elapsed > tt.maxTime) {
				t.Errorf("%s: took %v, want between %v and %v", tt.path, elapsed, tt.minTime, tt.maxTime)
			}
		}
	})
}

// TestClientGone: the request's own cancellation (the client went away) still
// reaches the handler through the deadline context.
func TestClientGone(t *testing.T) {
	got := make(chan error, 1)
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/wait", func(c *celeris.Context) error {
			select {
			case <-c.Context().Done():
				got <- c.Context().Err()
			case <-time.After(5 * time.Second):
				got <- nil
			}
			return nil // nobody is listening
		}, timeout.New(timeout.Config{Timeout: 10 * time.Second}))
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		client.Timeout = 200 * time.Millisecond
		if _, err := client.Get("http://" + addr + "/wait"); err == nil {
			t.Fatal("request did not time out on the client")
		}
		select {
		case err := <-got:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("handler saw %v, want context.Canceled", err)
			}
		case <-time.After(4 * time.Second):
			t.Fatal("handler not cancelled")
		}
	})
}

// TestTimeoutReachesErrorHandler: the 503 of a timed-out request is a
// *celeris.HTTPError handed to the configured error handler, so an API answers
// it in its own format like any other error.
func TestTimeoutReachesErrorHandler(t *testing.T) {
	_, addr := mwtest.StartConfig(t, celeris.Config{
		ErrorHandler: func(c *celeris.Context, err error) {
			var he *celeris.HTTPError
			if errors.As(err, &he) {
				_ = c.JSON(he.Code, map[string]any{"status": he.Code, "message": he.Message})
				return
			}
			_ = c.JSON(500, map[string]any{"status": 500})
		},
	}, func(s *celeris.Server) {
		s.GET("/slow", func(c *celeris.Context) error {
			<-c.Context().Done()
			return c.Context().Err()
		}, timeout.New(timeout.Config{Timeout: 50 * time.Millisecond, Message: "too slow"}))
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		resp, body := mwtest.Get(t, client, "http://"+addr+"/slow", nil)
		if resp.StatusCode != 503 || body != `{"message":"too slow","status":503}` {
			t.Fatalf("%d %q, want the error handler's 503", resp.StatusCode, body)
		}
	})
}
