package celerisredis_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/middleware/ratelimit"
	"github.com/celeris-dev/celeris/middleware/timeout"
	celerisredis "github.com/celeris-dev/celeris/redis"
	goredis "github.com/redis/go-redis/v9"
)

// A stalled Redis (a real redis-server under CLIENT PAUSE) answers within the
// route's timeout: 503 after the 1 s of a timeout middleware, or after the
// store's DefaultTimeout without one, whether or not the go-redis client was
// configured with ContextTimeoutEnabled; over a socket with Go's client.
func TestRateLimitStalledRedis(t *testing.T) {
	admin := startRedis(t)
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	var cases []stallCase
	for _, cte := range []bool{false, true} {
		store := celerisredis.NewRateLimitStore(warmClient(t, admin, cte), "stall:")
		_, addr := celeristest.Serve(t, quiet(), func(s *celeris.Server) {
			s.GET("/timeout", ok, timeout.New(timeout.Config{Timeout: time.Second}),
				ratelimit.New(ratelimit.Config{Store: store, Logger: discard}))
			s.GET("/bare", ok, ratelimit.New(ratelimit.Config{Store: store, Logger: discard}))
		})
		for _, path := range []string{"/timeout", "/bare"} {
			cases = append(cases, stallCase{name: fmt.Sprintf("ContextTimeoutEnabled=%v %s", cte, path), run: func() error {
				req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
				return want503(req)
			}})
		}
	}
	runStalled(t, admin, cases)
}

// stallCase is one call made while Redis stalls; run returns an error when
// its outcome is wrong.
type stallCase struct {
	name string
	run  func() error
}

// warmClient returns a go-redis client of admin's server, with or without
// ContextTimeoutEnabled, holding a connection made before the stall.
func warmClient(t *testing.T, admin *goredis.Client, contextTimeout bool) *goredis.Client {
	t.Helper()
	client := goredis.NewClient(&goredis.Options{Addr: admin.Options().Addr, ContextTimeoutEnabled: contextTimeout})
	t.Cleanup(func() { client.Close() })
	if err := client.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return client
}

// want503 sends req with Go's client and wants a 503.
func want503(req *http.Request) error {
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		return fmt.Errorf("status %d, want 503", resp.StatusCode)
	}
	return nil
}

// runStalled pauses admin's Redis for 4 s (CLIENT PAUSE ALL), runs the cases
// at once, and wants each to end well after 0.9 to 1.2 s: at the 1 s deadline.
func runStalled(t *testing.T, admin *goredis.Client, cases []stallCase) {
	t.Helper()
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "4000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	type result struct {
		name    string
		elapsed time.Duration
		err     error
	}
	results := make(chan result, len(cases))
	for _, c := range cases {
		go func() {
			start := time.Now()
			err := c.run()
			results <- result{name: c.name, elapsed: time.Since(start), err: err}
		}()
	}
	for range cases {
		r := <-results
		if r.err != nil || r.elapsed < 900*time.Millisecond || r.elapsed > 1200*time.Millisecond {
			t.Errorf("%s: %v after %v, want an answer after 1 s", r.name, r.err, r.elapsed.Round(time.Millisecond))
		} else {
			t.Logf("%s: after %v", r.name, r.elapsed.Round(time.Millisecond))
		}
	}
}
