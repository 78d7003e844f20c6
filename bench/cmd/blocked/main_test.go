package main

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/bench/internal/h2client"
	"github.com/celeris-dev/celeris/bench/internal/load"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/demo"
)

func TestParseDemos(t *testing.T) {
	tests := []struct {
		in      string
		want    []demoSpec
		wantErr bool
	}{
		{in: "before=/tmp/a,after=..", want: []demoSpec{{Name: "before", Path: "/tmp/a"}, {Name: "after", Path: ".."}}},
		{in: "/tmp/bin/demo", want: []demoSpec{{Name: "demo", Path: "/tmp/bin/demo"}}},
		{in: " a=x , ,b=y", want: []demoSpec{{Name: "a", Path: "x"}, {Name: "b", Path: "y"}}},
		{in: "a=x,a=y", wantErr: true},
		{in: "=x", wantErr: true},
		{in: "a=", wantErr: true},
		{in: ",", wantErr: true},
	}
	for _, tt := range tests {
		got, err := parseDemos(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("parseDemos(%q) error %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("parseDemos(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-demo", "a=/x,b=/y", "-warmup", "1s", "-duration", "2s"})
	if err != nil {
		t.Fatal(err)
	}
	if o.cfg.BlockFor != 4*time.Second || o.cfg.Blocked != 256 || o.cfg.Conns != 16 || o.cfg.Streams != 32 || o.rounds != 3 || !o.control || o.quietShare != 0.95 {
		t.Errorf("defaults: %+v", o)
	}
	bad := [][]string{
		{"-demo", "a=/x", "-blocked", "0"},
		{"-demo", "a=/x", "-rounds", "0"},
		{"-demo", "a=/x", "-block", "2s"},         // shorter than warm-up + window
		{"-demo", "a=/x", "-duration", "10s"},     // the wait would pass /slow's 10 s
		{"-demo", "a=/x", "-blocked-conns", "1"},  // 256 streams on one connection
		{"-demo", "a=/x", "-server-cpus", "2-1"},  // bad CPU list
		{"-demo", "a=/x", "extra"},                // stray argument
		{"-demo", "a=/x", "-streams", "0"},        // no clients
		{"-demo", "a=/x", "-warmup", "-1s"},       // negative warm-up
		{"-demo", "a=/x", "-server-procs", "0"},   // no cores
		{"-demo", "a=/x", "-blocked-conns", "0"},  // nowhere to send them
		{"-demo", "a=/x,a=/y"},                    // a name twice
		{"-demo", "a=/x", "-loader-cpus", "zero"}, // bad CPU list
		{"-demo", "a=/x", "-quiet", "0"},          // every run would count
		{"-demo", "a=/x", "-quiet", "1.5"},        // none would
	}
	for _, args := range bad {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}

func TestPercentilesOf(t *testing.T) {
	h := load.NewHistogram()
	if p := percentilesOf(h); p != (percentiles{}) {
		t.Errorf("empty histogram: %+v", p)
	}
	for v := int64(1); v <= 1000; v++ {
		h.RecordValue(v) // 1 µs .. 1 ms, uniform
	}
	p := percentilesOf(h)
	near := func(name string, got, want time.Duration) {
		if d := got - want; d < -2*time.Microsecond || d > 2*time.Microsecond {
			t.Errorf("%s = %v, want about %v", name, got, want)
		}
	}
	near("p50", p.P50, 500*time.Microsecond)
	near("p90", p.P90, 900*time.Microsecond)
	near("p99", p.P99, 990*time.Microsecond)
	near("max", p.Max, time.Millisecond)
}

func TestBlockedCallCheck(t *testing.T) {
	const wait = time.Second
	ok := h2client.Response{Status: 200, Body: []byte("OK")}
	tests := []struct {
		name string
		call blockedCall
		want string // a substring of the complaint; "" for none
	}{
		{name: "answered", call: blockedCall{resp: ok, elapsed: wait + time.Millisecond}},
		{name: "failed", call: blockedCall{err: errors.New("reset"), elapsed: wait}, want: "reset"},
		{name: "status", call: blockedCall{resp: h2client.Response{Status: 503}, elapsed: wait}, want: "status 503"},
		{name: "body", call: blockedCall{resp: h2client.Response{Status: 200, Body: []byte("no")}, elapsed: wait}, want: `body "no"`},
		{name: "early", call: blockedCall{resp: ok, elapsed: wait / 2}, want: "before"},
	}
	for _, tt := range tests {
		got := tt.call.check(wait)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: check = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestFormatRatios(t *testing.T) {
	res := func(p99 time.Duration, perCPU, loader float64) result {
		return result{percentiles: percentiles{P90: p99 / 2, P99: p99}, PerCPU: perCPU, LoaderCPU: loader}
	}
	rows := []row{
		{round: 1, demo: "before", blocked: 256, res: res(2*time.Millisecond, 100, 0.95)},
		{round: 1, demo: "after", blocked: 256, res: res(3*time.Millisecond, 150, 0.99)},
		{round: 2, demo: "before", blocked: 256, res: res(4*time.Millisecond, 100, 0.5)}, // disturbed
		{round: 2, demo: "after", blocked: 256, res: res(2*time.Millisecond, 120, 0.99)},
		{round: 1, demo: "before", blocked: 0, res: res(time.Millisecond, 0, 0.99)},
		{round: 1, demo: "after", blocked: 0, res: res(time.Millisecond, 100, 0.99)},
	}
	got := formatRatios(rows, "before", 0.9)
	for _, want := range []string{
		"| after | 256 | 1.50 0.50 (0.50-1.50, median 1.00) | 1.50 (1.50-1.50, median 1.50) | 1.50 0.50 (0.50-1.50, median 1.00) | 1.50 1.20 (1.20-1.50, median 1.35) |",
		"| after | 0 | 1.00 (1.00-1.00, median 1.00) | 1.00 (1.00-1.00, median 1.00) | 1.00 (1.00-1.00, median 1.00) | 0.00 (0.00-0.00, median 0.00) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("formatRatios lacks\n%s\nin\n%s", want, got)
		}
	}
	if strings.Contains(got, "| before |") {
		t.Errorf("the base compared with itself:\n%s", got)
	}

	got = formatBlockedCost(rows, 0.9)
	for _, want := range []string{
		"p99 with 256 blocked / p99 with none",
		"| before | 2.00 (2.00-2.00, median 2.00) | 2.00 (2.00-2.00, median 2.00) |",
		"| after | 3.00 (3.00-3.00, median 3.00) | 3.00 (3.00-3.00, median 3.00) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("formatBlockedCost lacks\n%s\nin\n%s", want, got)
		}
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{in: nil, want: 0},
		{in: []float64{3}, want: 3},
		{in: []float64{3, 1, 2}, want: 2},
		{in: []float64{4, 1, 3, 2}, want: 2.5},
	}
	for _, tt := range tests {
		if got := median(slices.Clone(tt.in)); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

// smallConfig is a short measurement for the tests.
func smallConfig(blocked int) config {
	return config{Blocked: blocked, BlockedConns: 2, BlockFor: time.Second,
		Conns: 2, Streams: 4, Warmup: 100 * time.Millisecond, Duration: 300 * time.Millisecond}
}

// TestMeasureDemo runs a measurement over real sockets against the demo's own
// routes: every blocked request is answered once its wait is up, and the load
// got answers while they were blocked.
func TestMeasureDemo(t *testing.T) {
	s, err := demo.NewTLSServer("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	addr := celeristest.Start(t, s)
	for _, blocked := range []int{8, 0} {
		res, err := measure(addr, smallConfig(blocked))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d blocked: %s", blocked, formatLine(row{blocked: blocked, res: res}))
		if res.OK == 0 || res.Errors != 0 || res.Non2xx != 0 {
			t.Errorf("%d blocked: GET /bench counts %+v", blocked, res.Counts)
		}
		if res.P50 <= 0 || res.P50 > res.P90 || res.P90 > res.P99 || res.P99 > res.Max {
			t.Errorf("%d blocked: percentiles out of order: %+v", blocked, res.percentiles)
		}
		if res.Blocked != blocked || res.BlockedOK != blocked || len(res.BlockedBad) != 0 {
			t.Errorf("%d blocked: %d answered well, bad: %q", blocked, res.BlockedOK, res.BlockedBad)
		}
	}
}

// TestMeasureEarlyAnswer: a /slow that does not wait is caught.
func TestMeasureEarlyAnswer(t *testing.T) {
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", EventLoops: 1})
	s.GET("/bench", func(c *celeris.Context) error { return c.String(http.StatusOK, "OK") })
	s.GET("/slow", func(c *celeris.Context) error { return c.String(http.StatusOK, "OK") })
	addr := celeristest.Start(t, s)
	res, err := measure(addr, smallConfig(4))
	if err != nil {
		t.Fatal(err)
	}
	if res.BlockedOK != 0 || len(res.BlockedBad) == 0 || !strings.Contains(res.BlockedBad[0], "before") {
		t.Errorf("early answers not caught: %d ok, bad %q", res.BlockedOK, res.BlockedBad)
	}
}
