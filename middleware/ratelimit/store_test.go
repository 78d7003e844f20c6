package ratelimit_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/ratelimit"
)

// recordingStore wraps a MemoryStore and records the keys it is asked for; it
// fails for the key "fail".
type recordingStore struct {
	mu   sync.Mutex
	keys []string
	mem  *ratelimit.MemoryStore
}

func (s *recordingStore) Take(ctx context.Context, key string, l ratelimit.Limit) (ratelimit.Result, error) {
	s.mu.Lock()
	s.keys = append(s.keys, key)
	s.mu.Unlock()
	if key == "h:x-api-key:fail" {
		return ratelimit.Result{}, errors.New("store down")
	}
	return s.mem.Take(ctx, key, l)
}

func (s *recordingStore) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.keys) == 0 {
		return ""
	}
	return s.keys[len(s.keys)-1]
}

func TestRateLimitHeaders(t *testing.T) {
	clk := newClock()
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/", ok, ratelimit.New(ratelimit.WithClock(ratelimit.Config{Rate: 0.5, Burst: 2, RateLimitHeaders: true}, clk.now)))
		s.GET("/named", ok, ratelimit.New(ratelimit.WithClock(ratelimit.Config{Rate: 100, Burst: 1000, RateLimitHeaders: true,
			PolicyName: `per "user"`}, clk.now)))
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		clk.advance(time.Hour)
		for i, want := range []struct {
			status    int
			rateLimit string
		}{
			{status: 200, rateLimit: `"default";r=1;t=2`},
			{status: 200, rateLimit: `"default";r=0;t=2`},
			{status: 429, rateLimit: `"default";r=0;t=2`},
		} {
			resp, _ := mwtest.Get(t, client, "http://"+addr+"/", nil)
			if resp.StatusCode != want.status || resp.Header.Get("RateLimit") != want.rateLimit ||
				resp.Header.Get("RateLimit-Policy") != `"default";q=2;w=4` || resp.Header.Get("X-RateLimit-Limit") != "" {
				t.Errorf("request %d: %d RateLimit %q Policy %q", i, resp.StatusCode, resp.Header.Get("RateLimit"), resp.Header.Get("RateLimit-Policy"))
			}
		}
		resp, _ := mwtest.Get(t, client, "http://"+addr+"/named", nil)
		if p := resp.Header.Get("RateLimit-Policy"); p != `"per \"user\"";q=1000;w=10` {
			t.Errorf("named policy %q", p)
		}
	})
}

// Keys: by API key header, by a value an auth middleware stored, falling back
// to the IP; a custom Store sees them; a failing Store answers 503 or, with
// FailOpen, lets the request through.
func TestKeysAndStore(t *testing.T) {
	store := &recordingStore{mem: ratelimit.NewMemoryStore(ratelimit.MemoryOptions{})}
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	auth := func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if u := c.Header("X-User"); u != "" {
				c.Set("user", u)
			}
			return next(c)
		}
	}
	// The server logs where the limiter does: a failure is logged once in all.
	var logs mwtest.LogBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	// A JWT subject and an API client of the same name.
	subject := func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if v := c.Header("X-Sub"); v != "" {
				c.Set("jwt.sub", v)
			}
			if v := c.Header("X-Client"); v != "" {
				c.Set("apikey", v)
			}
			return next(c)
		}
	}
	_, addr := mwtest.StartConfig(t, celeris.Config{Logger: logger}, func(s *celeris.Server) {
		s.GET("/apikey", ok, ratelimit.New(ratelimit.Config{Rate: 0.001, Burst: 1, Store: store, Logger: logger,
			KeyFunc: ratelimit.ByHeader("X-API-Key")}))
		s.GET("/open", ok, ratelimit.New(ratelimit.Config{Rate: 0.001, Burst: 1, Store: store, FailOpen: true, Logger: logger,
			KeyFunc: ratelimit.ByHeader("X-API-Key")}))
		s.GET("/user", ok, auth, ratelimit.New(ratelimit.Config{Rate: 0.001, Burst: 1, Store: store,
			KeyFunc: ratelimit.FirstOf(ratelimit.ByContextValue("user"), ratelimit.ByClientIP)}))
		s.GET("/default", ok, ratelimit.New(ratelimit.Config{Rate: 0.001, Burst: 1, Store: store}))
		s.GET("/principal", ok, subject, ratelimit.New(ratelimit.Config{Rate: 0.001, Burst: 1, Store: store,
			KeyFunc: ratelimit.FirstOf(ratelimit.ByContextValue("jwt.sub"), ratelimit.ByContextValue("apikey"))}))
	})
	client := mwtest.Client(t)
	get := func(path string, h http.Header) int {
		t.Helper()
		resp, _ := mwtest.Get(t, client, "http://"+addr+path, h)
		return resp.StatusCode
	}
	for _, tt := range []struct {
		path   string
		header http.Header
		status int
		key    string
	}{
		{path: "/apikey", header: mwtest.H("X-API-Key", "k1"), status: 200, key: "h:x-api-key:k1"},
		{path: "/apikey", header: mwtest.H("X-API-Key", "k1"), status: 429, key: "h:x-api-key:k1"},
		{path: "/apikey", header: mwtest.H("X-API-Key", "k2"), status: 200, key: "h:x-api-key:k2"},
		{path: "/apikey", header: mwtest.H("X-API-Key", "fail"), status: 503, key: "h:x-api-key:fail"},
		{path: "/open", header: mwtest.H("X-API-Key", "fail"), status: 200, key: "h:x-api-key:fail"},
		{path: "/user", header: mwtest.H("X-User", "alice"), status: 200, key: "v:user:alice"},
		{path: "/user", header: mwtest.H("X-User", "alice"), status: 429, key: "v:user:alice"},
		{path: "/user", header: mwtest.H("X-User", "bob"), status: 200, key: "v:user:bob"},
		{path: "/principal", header: mwtest.H("X-Sub", "billing"), status: 200, key: "v:jwt.sub:billing"},
		{path: "/principal", header: mwtest.H("X-Client", "billing"), status: 200, key: "v:apikey:billing"},
		{path: "/principal", header: mwtest.H("X-Client", "billing"), status: 429, key: "v:apikey:billing"},
		// The default key, as text for a Store other than the MemoryStore, is
		// ByClientIP's: one bucket per client in a Store they share.
		{path: "/default", status: 200, key: "ip:127.0.0.1"},
		{path: "/user", status: 429, key: "ip:127.0.0.1"},
	} {
		if got := get(tt.path, tt.header); got != tt.status || store.last() != tt.key {
			t.Errorf("%s %v: %d key %q, want %d %q", tt.path, tt.header, got, store.last(), tt.status, tt.key)
		}
	}
	// One record per failed request: the 503 and the fail-open one.
	if n := strings.Count(logs.String(), "\n"); n != 2 || strings.Count(logs.String(), "ratelimit: store failed") != 2 ||
		!strings.Contains(logs.String(), "store down") {
		t.Errorf("%d records: %s", n, logs.String())
	}
}

// The default key is the client IP behind trusted proxies: clients behind the
// proxy get a bucket each; from an untrusted peer, X-Forwarded-For is ignored
// (a client cannot pick a fresh bucket per request).
func TestClientIPKey(t *testing.T) {
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	register := func(s *celeris.Server) {
		s.GET("/", ok, ratelimit.New(ratelimit.Config{Rate: 0.001, Burst: 1}))
	}
	_, trusted := mwtest.StartConfig(t, celeris.Config{TrustedProxies: celeris.MustParsePrefixes("127.0.0.1", "10.0.0.0/8")}, register)
	_, untrusted := mwtest.Start(t, register)
	client := mwtest.Client(t)
	for _, tt := range []struct {
		addr, xff string
		status    int
	}{
		{addr: trusted, xff: "203.0.113.1", status: 200},
		{addr: trusted, xff: "203.0.113.1", status: 429},
		{addr: trusted, xff: "198.51.100.7, 10.0.0.1", status: 200},
		{addr: trusted, xff: "198.51.100.7", status: 429},
		{addr: trusted, status: 200}, // the proxy's own address
		{addr: untrusted, xff: "203.0.113.1", status: 200},
		{addr: untrusted, xff: "203.0.113.2", status: 429},
		{addr: untrusted, status: 429},
	} {
		var h http.Header
		if tt.xff != "" {
			h = mwtest.H("X-Forwarded-For", tt.xff)
		}
		if resp, _ := mwtest.Get(t, client, "http://"+tt.addr+"/", h); resp.StatusCode != tt.status {
			t.Errorf("%s XFF %q: %d, want %d", tt.addr, tt.xff, resp.StatusCode, tt.status)
		}
	}
}

// Next is the time until one more whole token: the effective window of the
// RateLimit field.
func TestNext(t *testing.T) {
	clk := newClock()
	l := ratelimit.NewLimiter(ratelimit.WithClock(ratelimit.Config{Rate: 10, Burst: 5}, clk.now))
	for i, tt := range []struct {
		advance   time.Duration
		remaining int
		next      time.Duration
	}{
		{remaining: 4, next: 100 * time.Millisecond},                                // 4.0 left
		{advance: 50 * time.Millisecond, remaining: 3, next: 50 * time.Millisecond}, // 3.5 left
		{advance: 20 * time.Millisecond, remaining: 2, next: 30 * time.Millisecond}, // 2.7 left
		{advance: time.Hour, remaining: 4, next: 100 * time.Millisecond},
	} {
		clk.advance(tt.advance)
		if r := l.Allow("k"); r.Remaining != tt.remaining || r.Next < tt.next-time.Microsecond || r.Next > tt.next+time.Microsecond {
			t.Errorf("step %d: %+v, want remaining %d next %v", i, r, tt.remaining, tt.next)
		}
	}
}

func BenchmarkMemoryTake(b *testing.B) {
	m := ratelimit.NewMemoryStore(ratelimit.MemoryOptions{})
	l := ratelimit.Limit{Rate: 1e9, Burst: 1e6}
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_, _ = m.Take(ctx, "client-key", l)
		}
	})
}
