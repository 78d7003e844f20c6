package celerisredis_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/middleware/ratelimit"
	"github.com/celeris-dev/celeris/middleware/timeout"
	celerisredis "github.com/celeris-dev/celeris/redis"
	goredis "github.com/redis/go-redis/v9"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writes (a logger's output).
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A stalled Redis (a real redis-server under CLIENT PAUSE) answers within the
// route's timeout: 503 after the 1 s of a timeout middleware, or after the
// store's DefaultTimeout without one, whether or not the go-redis client was
// configured with ContextTimeoutEnabled; over a socket with Go's client.
func TestRateLimitStalledRedis(t *testing.T) {
	admin := startRedis(t)
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	type result struct {
		name    string
		status  int
		elapsed time.Duration
		err     error
	}
	var cases []func() result
	for _, cte := range []bool{false, true} {
		// The client as the guide configures it, with or without ContextTimeoutEnabled.
		client := goredis.NewClient(&goredis.Options{Addr: admin.Options().Addr, ContextTimeoutEnabled: cte})
		t.Cleanup(func() { client.Close() })
		if err := client.Ping(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		store := celerisredis.NewRateLimitStore(client, "stall:")
		_, addr := celeristest.Serve(t, quiet(), func(s *celeris.Server) {
			s.GET("/timeout", ok, timeout.New(timeout.Config{Timeout: time.Second}),
				ratelimit.New(ratelimit.Config{Store: store, Logger: discard}))
			s.GET("/bare", ok, ratelimit.New(ratelimit.Config{Store: store, Logger: discard}))
		})
		for _, path := range []string{"/timeout", "/bare"} {
			name := fmt.Sprintf("ContextTimeoutEnabled=%v %s", cte, path)
			cases = append(cases, func() result {
				c := &http.Client{Timeout: 10 * time.Second}
				start := time.Now()
				resp, err := c.Get("http://" + addr + path)
				r := result{name: name, elapsed: time.Since(start), err: err}
				if err == nil {
					r.status = resp.StatusCode
					resp.Body.Close()
				}
				return r
			})
		}
	}
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "4000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	results := make(chan result, len(cases))
	for _, c := range cases {
		go func() { results <- c() }()
	}
	for range cases {
		r := <-results
		if r.err != nil || r.status != http.StatusServiceUnavailable || r.elapsed < 900*time.Millisecond || r.elapsed > 1200*time.Millisecond {
			t.Errorf("%s: %d %v after %v, want 503 after 1 s", r.name, r.status, r.err, r.elapsed.Round(time.Millisecond))
		} else {
			t.Logf("%s: 503 after %v", r.name, r.elapsed.Round(time.Millisecond))
		}
	}
}
