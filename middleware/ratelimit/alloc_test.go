//go:build !race

package ratelimit_test

import (
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/ratelimit"
)

// TestAllocs: with the default key (client IP), an allowed request of a known
// client allocates nothing, with or without the RateLimit fields.
func TestAllocs(t *testing.T) {
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/base", ok)
		s.GET("/limited", ok, ratelimit.New(ratelimit.Config{Rate: 1e9, Burst: 1e6}))
		s.GET("/headers", ok, ratelimit.New(ratelimit.Config{Rate: 1e9, Burst: 1e6, RateLimitHeaders: true}))
	})
	const n = 2000
	base := mwtest.AllocsPerRequest(t, addr, "GET /base HTTP/1.1\r\nHost: x\r\n\r\n", n)
	limited := mwtest.AllocsPerRequest(t, addr, "GET /limited HTTP/1.1\r\nHost: x\r\n\r\n", n)
	headers := mwtest.AllocsPerRequest(t, addr, "GET /headers HTTP/1.1\r\nHost: x\r\n\r\n", n)
	if limited-base > 0.1 || headers-base > 0.1 {
		t.Errorf("%.2f and (with RateLimit fields) %.2f allocs per request over base %.2f", limited-base, headers-base, base)
	}
}

func TestAllowAllocs(t *testing.T) {
	l := ratelimit.NewLimiter(ratelimit.Config{Rate: 1e9, Burst: 1e6})
	key := "a-key-longer-than-thirty-two-bytes-for-sure"
	l.Allow(key)
	if a := testing.AllocsPerRun(1000, func() { l.Allow(key) }); a != 0 {
		t.Fatalf("Allow: %v allocs", a)
	}
}
