//go:build !race

package metrics_test

import (
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/metrics"
)

func TestAllocs(t *testing.T) {
	m := metrics.New(metrics.Config{})
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/base", ok)
		s.GET("/counted", ok, m.Middleware())
	})
	const n = 2000
	base := mwtest.AllocsPerRequest(t, addr, "GET /base HTTP/1.1\r\nHost: x\r\n\r\n", n)
	counted := mwtest.AllocsPerRequest(t, addr, "GET /counted HTTP/1.1\r\nHost: x\r\n\r\n", n)
	if counted-base > 0.1 {
		t.Errorf("%.2f allocs per request over base %.2f", counted-base, base)
	}
	if a := testing.AllocsPerRun(1000, func() { m.Observe("GET", 200, time.Millisecond) }); a != 0 {
		t.Errorf("Observe: %v allocs", a)
	}
}

func BenchmarkObserveParallel(b *testing.B) {
	m := metrics.New(metrics.Config{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Observe("GET", 200, 3*time.Millisecond)
		}
	})
}
