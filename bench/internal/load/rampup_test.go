package load

import (
	"strings"
	"testing"
	"time"
)

func sample(clients int, ok int64, p95 time.Duration) Sample {
	return Sample{
		Clients:     clients,
		Elapsed:     100 * time.Millisecond,
		Counts:      Counts{OK: ok},
		Percentiles: Percentiles{P95: p95},
	}
}

var testCfg = RampupConfig{
	Start:       4,
	Step:        4,
	Interval:    100 * time.Millisecond,
	P95Limit:    150 * time.Millisecond,
	MaxDuration: 15 * time.Second,
}

func TestRampupStopsOnP95(t *testing.T) {
	c := NewController(testCfg)
	if c.Clients() != 4 {
		t.Fatalf("Clients() = %d, want 4", c.Clients())
	}
	steps := []struct {
		s        Sample
		wantNext int
		wantStop bool
	}{
		{s: sample(4, 100, time.Millisecond), wantNext: 8},
		{s: sample(8, 300, 2*time.Millisecond), wantNext: 12},
		{s: sample(12, 200, 100*time.Millisecond), wantNext: 16},
		{s: sample(16, 500, 151*time.Millisecond), wantNext: 16, wantStop: true},
	}
	for i, st := range steps {
		next, stop := c.Observe(st.s)
		if next != st.wantNext || stop != st.wantStop {
			t.Fatalf("step %d: Observe = (%d, %v), want (%d, %v)", i, next, stop, st.wantNext, st.wantStop)
		}
	}
	// The last interval had the most RPS but broke the limit: the best is 8 clients.
	best, ok := c.Best()
	if !ok || best.Clients != 8 || best.RPS != 3000 {
		t.Fatalf("Best() = %+v, %v; want 8 clients at 3000 rps", best, ok)
	}
	if !strings.Contains(c.StopReason(), "p95") || len(c.Series()) != 4 {
		t.Fatalf("reason %q, series %d", c.StopReason(), len(c.Series()))
	}
}

func TestRampupStopsOnDuration(t *testing.T) {
	cfg := testCfg
	cfg.MaxDuration = 300 * time.Millisecond
	c := NewController(cfg)
	clients := c.Clients()
	var n int
	for {
		next, stop := c.Observe(sample(clients, 10, time.Millisecond))
		n++
		if stop {
			break
		}
		clients = next
	}
	if n != 3 || !strings.Contains(c.StopReason(), "max duration") {
		t.Fatalf("stopped after %d intervals (%q), want 3 and max duration", n, c.StopReason())
	}
}

func TestRampupStopsOnStall(t *testing.T) {
	c := NewController(testCfg)
	if _, stop := c.Observe(sample(4, 0, 0)); stop {
		t.Fatal("stopped after one empty interval; the limit is 150ms")
	}
	if _, stop := c.Observe(sample(8, 0, 0)); !stop || !strings.Contains(c.StopReason(), "no 2xx") {
		t.Fatalf("not stopped after 200ms without answers (%q)", c.StopReason())
	}
	if _, ok := c.Best(); ok {
		t.Fatal("Best() ok with no answers")
	}
}

func TestRampupMaxClients(t *testing.T) {
	cfg := testCfg
	cfg.MaxClients = 6
	c := NewController(cfg)
	if next, stop := c.Observe(sample(4, 1, time.Millisecond)); next != 6 || stop {
		t.Fatalf("Observe = %d, %v; want 6, false", next, stop)
	}
	if _, stop := c.Observe(sample(6, 1, time.Millisecond)); !stop {
		t.Fatal("not stopped at max clients")
	}
}

func TestRampupBestFallsBack(t *testing.T) {
	c := NewController(testCfg)
	c.Observe(sample(4, 50, time.Second))
	best, ok := c.Best()
	if !ok || best.Clients != 4 {
		t.Fatalf("Best() = %+v, %v; want the only interval", best, ok)
	}
}
