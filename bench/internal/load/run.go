// Package load is the load generator: a Pool of clients (HTTP/1.1 via
// h1client, h2c via h2client) or a WSPool of WebSocket echo connections
// (wsclient frames on epoll loops), recording into a sharded HDR-histogram
// Recorder, driven either for a fixed time at a fixed client count or by the
// rampup Controller, which adds clients interval by interval until the p95
// latency breaks a limit.
//
// Life of a measurement: Run starts the clients, lets them warm up, drops
// what they recorded, calls OnWindow(true), then drains the Recorder once per
// interval (for progress and, in rampup, for the controller) until the end,
// calls OnWindow(false) and stops the clients. Only 2xx answers count towards
// RPS; other statuses and failed requests are counted apart.
package load

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/bench/internal/procstat"
)

// Modes.
const (
	ModeRampup = "rampup"
	ModeFixed  = "fixed"
)

// Options describe one measurement.
type Options struct {
	Target
	Mode   string
	Rampup RampupConfig
	// Conns is the fixed mode's connection count (h2c: times Target.Streams clients).
	Conns    int
	Duration time.Duration
	Warmup   time.Duration
	// LoaderCores is how many cores the loader may use (for the saturation check).
	LoaderCores int
	// OnWindow, if set, is called when the measured window starts and ends.
	OnWindow func(start bool)
	// Progress, if set, is called after every interval.
	Progress func(clients int, rps float64, p95 time.Duration)
}

// Result is what one measurement found.
type Result struct {
	// Clients, RPS and Percentiles describe the interval of maximum RPS in
	// rampup mode, the whole window in fixed mode.
	Clients int
	RPS     float64
	Percentiles
	// Total counts the whole measured window.
	Total   Counts
	Elapsed time.Duration
	Series  []Point
	// StopReason says why a rampup ended.
	StopReason string
	// LoaderCPU is the share of LoaderCores this process kept busy, and
	// LoaderCPUTime the CPU time behind it.
	LoaderCPU     float64
	LoaderCPUTime time.Duration
	Warnings      []string
}

// SaturationThreshold is the LoaderCPU above which a result is flagged:
// the loader, not the server, may have been the bottleneck.
const SaturationThreshold = 0.9

const fixedTick = 250 * time.Millisecond

// fixedClients returns the fixed mode's client count.
func (o *Options) fixedClients() int {
	if catalog.IsH2(o.Proto) || o.Proto == catalog.H3 {
		return o.Conns * max(o.Streams, 1)
	}
	return o.Conns
}

// Run performs one measurement. It returns ctx's error if cancelled.
func Run(ctx context.Context, o Options) (Result, error) {
	rec := NewRecorder(runtime.GOMAXPROCS(0))
	var pool driver
	var wsPool *WSPool
	if o.Proto == catalog.WS {
		// WebSocket: fixed mode only; Grow dials and upgrades every
		// connection before the warm-up starts.
		wsPool = NewWSPool(o.Target, rec, runtime.GOMAXPROCS(0), false)
		pool = wsPool
		o.Mode = ModeFixed
	} else {
		pool = NewPool(o.Target, rec)
	}
	var res Result
	defer func() {
		if !pool.Stop() {
			res.Warnings = append(res.Warnings, "some clients did not stop in time")
		}
	}()
	if o.Mode == ModeRampup {
		pool.Grow(o.Rampup.Start)
	} else {
		pool.Grow(o.fixedClients())
	}
	if err := sleep(ctx, o.Warmup); err != nil {
		return res, err
	}
	total := NewHistogram()
	rec.Drain(total) // drop the warm-up
	total.Reset()

	if o.OnWindow != nil {
		o.OnWindow(true)
	}
	cpu0 := procstat.SelfCPU()
	start := time.Now()
	var end time.Time
	var err error
	if o.Mode == ModeRampup {
		end, err = runRampup(ctx, &o, pool, rec, &res)
	} else {
		end, err = runFixed(ctx, &o, pool, rec, total, &res)
	}
	if o.OnWindow != nil {
		o.OnWindow(false)
	}
	cpu := procstat.SelfCPU() - cpu0
	if wsPool != nil {
		// A failed WebSocket connection is not dialled again: the count is
		// of connections, over the warm-up and the window.
		if f := wsPool.Failed(); f > 0 {
			res.Total.Errors = f
			res.Warnings = append(res.Warnings, fmt.Sprintf("%d of %d connections failed, the first: %v",
				f, wsPool.Size(), wsPool.FirstError()))
		}
	}
	res.Elapsed = end.Sub(start)
	res.LoaderCPUTime = cpu
	if cores := max(o.LoaderCores, 1); res.Elapsed > 0 {
		res.LoaderCPU = cpu.Seconds() / (res.Elapsed.Seconds() * float64(cores))
	}
	if res.LoaderCPU > SaturationThreshold {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"loader saturated: it used %.0f%% of its %d core(s); the server may be faster than measured",
			res.LoaderCPU*100, max(o.LoaderCores, 1)))
	}
	if res.Total.Errors > 0 || res.Total.Non2xx > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d errors, %d non-2xx responses",
			res.Total.Errors, res.Total.Non2xx))
	}
	return res, err
}

func runFixed(ctx context.Context, o *Options, pool driver, rec *Recorder, hist *hdrhistogram.Histogram, res *Result) (time.Time, error) {
	start := time.Now()
	deadline := start.Add(o.Duration)
	last := start
	for {
		wait := min(fixedTick, time.Until(deadline))
		err := sleep(ctx, wait)
		now := time.Now()
		c := rec.Drain(hist)
		res.Total.add(c)
		if o.Progress != nil && now.After(last) {
			o.Progress(pool.Size(), float64(c.OK)/now.Sub(last).Seconds(), PercentilesOf(hist).P95)
		}
		last = now
		if err != nil || !now.Before(deadline) {
			res.Clients = pool.Size()
			if el := now.Sub(start); el > 0 {
				res.RPS = float64(res.Total.OK) / el.Seconds()
			}
			res.Percentiles = PercentilesOf(hist)
			res.Series = []Point{{Clients: res.Clients, RPS: res.RPS, Percentiles: res.Percentiles, Counts: res.Total}}
			return now, err
		}
	}
}

func runRampup(ctx context.Context, o *Options, pool driver, rec *Recorder, res *Result) (time.Time, error) {
	ctl := NewController(o.Rampup)
	iv := NewHistogram()
	ticker := time.NewTicker(o.Rampup.Interval)
	defer ticker.Stop()
	last := time.Now()
	var err error
	for {
		select {
		case <-ctx.Done():
			err = ctx.Err()
		case <-ticker.C:
		}
		now := time.Now()
		c := rec.Drain(iv)
		res.Total.add(c)
		s := Sample{Clients: pool.Size(), Elapsed: now.Sub(last), Counts: c, Percentiles: PercentilesOf(iv)}
		iv.Reset()
		last = now
		next, stop := ctl.Observe(s)
		if o.Progress != nil {
			o.Progress(s.Clients, float64(c.OK)/s.Elapsed.Seconds(), s.P95)
		}
		if stop || err != nil {
			res.Series = ctl.Series()
			res.StopReason = ctl.StopReason()
			if err != nil {
				res.StopReason = "interrupted"
			}
			if best, ok := ctl.Best(); ok {
				res.Clients, res.RPS, res.Percentiles = best.Clients, best.RPS, best.Percentiles
			}
			return now, err
		}
		pool.Grow(next)
	}
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
