package ratelimit_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/ratelimit"
)

// clock is a fake time source.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Unix(1_700_000_000, 0)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestMiddleware(t *testing.T) {
	clk := newClock()
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/ip", ok, ratelimit.New(ratelimit.WithClock(ratelimit.Config{Rate: 0.5, Burst: 3, Headers: true}, clk.now)))
		s.GET("/key", ok, ratelimit.New(ratelimit.WithClock(ratelimit.Config{
			Rate:    1,
			Burst:   1,
			KeyFunc: func(c *celeris.Context) string { return c.Header("X-Key") },
		}, clk.now)))
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		url := "http://" + addr
		clk.advance(time.Hour) // every bucket full again
		for i, want := range []struct {
			status                       int
			remaining, reset, retryAfter string
		}{
			{status: 200, remaining: "2", reset: "2"},
			{status: 200, remaining: "1", reset: "4"},
			{status: 200, remaining: "0", reset: "6"},
			{status: 429, remaining: "0", reset: "6", retryAfter: "2"},
		} {
			resp, body := mwtest.Get(t, client, url+"/ip", nil)
			got := [4]string{resp.Header.Get("X-RateLimit-Remaining"), resp.Header.Get("X-RateLimit-Reset"),
				resp.Header.Get("Retry-After"), resp.Header.Get("X-RateLimit-Limit")}
			if resp.StatusCode != want.status || got != [4]string{want.remaining, want.reset, want.retryAfter, "3"} {
				t.Errorf("request %d: %d %q %v", i, resp.StatusCode, body, got)
			}
			if resp.StatusCode == 429 && body != "Too Many Requests" {
				t.Errorf("429 body %q", body)
			}
		}
		clk.advance(1500 * time.Millisecond) // 0.75 token: still refused, 1 s rounded up
		resp, _ := mwtest.Get(t, client, url+"/ip", nil)
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
			t.Errorf("after 1.5s: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		clk.advance(500 * time.Millisecond)
		if resp, _ := mwtest.Get(t, client, url+"/ip", nil); resp.StatusCode != 200 {
			t.Errorf("after refill: %d", resp.StatusCode)
		}

		for _, key := range []string{"a", "b"} {
			if resp, _ := mwtest.Get(t, client, url+"/key", mwtest.H("X-Key", key)); resp.StatusCode != 200 {
				t.Errorf("key %s first: %d", key, resp.StatusCode)
			}
			if resp, _ := mwtest.Get(t, client, url+"/key", mwtest.H("X-Key", key)); resp.StatusCode != 429 || resp.Header.Get("X-RateLimit-Limit") != "" {
				t.Errorf("key %s second: %d %v", key, resp.StatusCode, resp.Header)
			}
		}
		for range 3 { // no key: exempt
			if resp, _ := mwtest.Get(t, client, url+"/key", nil); resp.StatusCode != 200 {
				t.Errorf("exempt: %d", resp.StatusCode)
			}
		}
	})
}

func TestAllow(t *testing.T) {
	clk := newClock()
	l := ratelimit.NewLimiter(ratelimit.WithClock(ratelimit.Config{Rate: 10, Burst: 5, SweepInterval: time.Second}, clk.now))
	for i := range 5 {
		if r := l.Allow("k"); !r.Allowed || r.Remaining != 4-i {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
	r := l.Allow("k")
	if r.Allowed || r.RetryAfter != 100*time.Millisecond || r.Reset != 500*time.Millisecond {
		t.Fatalf("refused: %+v", r)
	}
	clk.advance(100 * time.Millisecond)
	if r := l.Allow("k"); !r.Allowed {
		t.Fatalf("after one token's time: %+v", r)
	}
	for i := range 100 {
		l.Allow("key-" + string(rune('A'+i)))
	}
	if n := l.Len(); n != 101 {
		t.Fatalf("Len = %d", n)
	}
}

// TestSweepDropsOnlyFullBuckets: a bucket still refilling survives a sweep.
func TestSweepDropsOnlyFullBuckets(t *testing.T) {
	clk := newClock()
	l := ratelimit.NewLimiter(ratelimit.WithClock(ratelimit.Config{Rate: 1, Burst: 10, Shards: 1, SweepInterval: time.Second}, clk.now))
	for range 10 {
		l.Allow("drained")
	}
	l.Allow("full") // 9 tokens left, full again in 1s
	clk.advance(2 * time.Second)
	l.Allow("trigger") // sweeps the only shard
	if n := l.Len(); n != 2 {
		t.Fatalf("Len = %d, want 2 (drained and trigger)", n)
	}

	if r := l.Allow("drained"); !r.Allowed || r.Remaining != 1 {
		t.Fatalf("drained bucket lost its state: %+v", r)
	}
	clk.advance(time.Hour)
	l.Allow("trigger")
	if n := l.Len(); n != 1 {
		t.Fatalf("Len after everything refilled = %d, want 1", n)
	}
}

func TestConcurrentAllow(t *testing.T) {
	l := ratelimit.NewLimiter(ratelimit.Config{Rate: 0.001, Burst: 50})
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 100 {
				if l.Allow("shared").Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 50 {
		t.Fatalf("allowed %d, want the burst of 50", n)
	}
}
