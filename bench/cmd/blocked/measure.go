package main

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/bench/internal/h2client"
	"github.com/celeris-dev/celeris/bench/internal/load"
	"github.com/celeris-dev/celeris/bench/internal/procstat"
)

// maxBlock is the longest wait the demo's GET /slow accepts (DEMO.md: up to 10000 ms).
const maxBlock = 10 * time.Second

// maxStreamsPerConn keeps each blocked connection within the demo's
// SETTINGS_MAX_CONCURRENT_STREAMS (250 by default); the client would otherwise
// queue the excess streams instead of sending them.
const maxStreamsPerConn = 250

// config describes one measurement.
type config struct {
	// Blocked requests (GET /slow?ms=BlockFor) are opened on BlockedConns h2c
	// connections before the load starts; 0 is the control.
	Blocked      int
	BlockedConns int
	// BlockFor is how long each blocked request waits in its handler; it must
	// outlast the warm-up and the window (see validate).
	BlockFor time.Duration
	// Conns h2c connections with Streams clients each send GET /bench.
	Conns, Streams   int
	Warmup, Duration time.Duration
	// PID is the server process, for its CPU time; 0 leaves it out.
	PID int
}

// blockMargin is what BlockFor must exceed the warm-up and the window by: the
// time to open the blocked streams and to stop the load.
const blockMargin = 500 * time.Millisecond

// validate checks the counts and that the blocked requests stay blocked for the
// whole measurement.
func (c *config) validate() error {
	switch {
	case c.Blocked < 0:
		return errors.New("-blocked must be >= 0")
	case c.Blocked > 0 && c.BlockedConns < 1:
		return errors.New("-blocked-conns must be >= 1")
	case c.Blocked > 0 && (c.Blocked+c.BlockedConns-1)/c.BlockedConns > maxStreamsPerConn:
		return fmt.Errorf("%d blocked requests on %d connections exceed %d streams per connection", c.Blocked, c.BlockedConns, maxStreamsPerConn)
	case c.Conns < 1 || c.Streams < 1:
		return errors.New("-conns and -streams must be >= 1")
	case c.Duration <= 0 || c.Warmup < 0:
		return errors.New("-duration must be > 0 and -warmup >= 0")
	case c.BlockFor > maxBlock:
		return fmt.Errorf("-block %v exceeds the demo's /slow limit of %v", c.BlockFor, maxBlock)
	case c.Blocked > 0 && c.BlockFor < c.Warmup+c.Duration+blockMargin:
		return fmt.Errorf("-block %v must be at least warm-up + duration + %v (%v)", c.BlockFor, blockMargin, c.Warmup+c.Duration+blockMargin)
	}
	return nil
}

// percentiles of the GET /bench latencies (the load package's summary of its
// recorder's histogram, values in microseconds).
type percentiles = load.Percentiles

var percentilesOf = load.PercentilesOf

// result is what one measurement found.
type result struct {
	load.Counts // GET /bench answers in the window
	Elapsed     time.Duration
	RPS         float64
	// PerCPU is OK answers per server CPU-second (0 without a PID).
	PerCPU    float64
	ServerCPU time.Duration
	// LoaderCPU is the share of this process's cores it kept busy.
	LoaderCPU float64
	percentiles

	// Blocked requests: how many were answered 200 "OK" no earlier than
	// BlockFor, the latest answer's delay past BlockFor, and the first failures.
	Blocked    int
	BlockedOK  int
	BlockedLag time.Duration
	BlockedBad []string
}

// blockedCall is the outcome of one blocked request.
type blockedCall struct {
	resp    h2client.Response
	err     error
	elapsed time.Duration
}

// check says what is wrong with a blocked request's answer, or "" when it was
// 200 "OK" and came no earlier than blockFor.
func (b *blockedCall) check(blockFor time.Duration) string {
	switch {
	case b.err != nil:
		return b.err.Error()
	case b.resp.Status != 200:
		return "status " + strconv.Itoa(b.resp.Status)
	case string(b.resp.Body) != "OK":
		return fmt.Sprintf("body %q", b.resp.Body)
	case b.elapsed < blockFor:
		return fmt.Sprintf("answered after %v, before its %v were up", b.elapsed.Round(time.Millisecond), blockFor)
	}
	return ""
}

// maxBad is how many blocked failures a result keeps.
const maxBad = 3

// measure opens the blocked requests on addr, drives GET /bench over h2c for
// the warm-up and the window, stops the load, then waits for every blocked
// request's answer and checks it.
func measure(addr string, c config) (result, error) {
	var res result
	if err := c.validate(); err != nil {
		return res, err
	}
	calls, wait, closeBlocked, err := openBlocked(addr, c)
	if err != nil {
		return res, err
	}
	defer closeBlocked()

	rec := load.NewRecorder(runtime.GOMAXPROCS(0))
	pool := load.NewPool(load.Target{Proto: catalog.H2C, Addr: addr, Method: "GET", Path: "/bench", Streams: c.Streams}, rec)
	pool.Grow(c.Conns * c.Streams)
	time.Sleep(c.Warmup)
	hist := load.NewHistogram()
	rec.Drain(hist) // drop the warm-up
	hist.Reset()
	cpu0, cpuErr := serverCPU(c.PID)
	self0 := procstat.SelfCPU()
	start := time.Now()
	time.Sleep(c.Duration)
	res.Counts = rec.Drain(hist)
	res.Elapsed = time.Since(start)
	cpu1, _ := serverCPU(c.PID)
	self := procstat.SelfCPU() - self0
	if !pool.Stop() {
		return res, errors.New("the GET /bench clients did not stop in time")
	}
	res.RPS = float64(res.OK) / res.Elapsed.Seconds()
	res.LoaderCPU = self.Seconds() / (res.Elapsed.Seconds() * float64(runtime.GOMAXPROCS(0)))
	res.percentiles = percentilesOf(hist)
	if c.PID > 0 && cpuErr == nil {
		res.ServerCPU = cpu1 - cpu0
		if res.ServerCPU > 0 {
			res.PerCPU = float64(res.OK) / res.ServerCPU.Seconds()
		}
	}

	res.Blocked = c.Blocked
	if !wait(c.BlockFor + 10*time.Second) {
		// Closing the connections fails the requests still waiting, which
		// then count among the bad ones.
		closeBlocked()
		if !wait(5 * time.Second) {
			return res, errors.New("blocked requests neither answered nor failed after their connections closed")
		}
	}
	for i := range calls {
		b := &calls[i]
		if why := b.check(c.BlockFor); why != "" {
			if len(res.BlockedBad) < maxBad {
				res.BlockedBad = append(res.BlockedBad, why)
			}
			continue
		}
		res.BlockedOK++
		res.BlockedLag = max(res.BlockedLag, b.elapsed-c.BlockFor)
	}
	return res, nil
}

func serverCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, nil
	}
	return procstat.ProcessCPU(pid)
}

// openBlocked dials c.BlockedConns h2c connections and opens c.Blocked
// GET /slow requests spread over them. It returns once every request was
// started and then given a moment to reach its handler: calls fills in as
// the answers come (read them after wait returned true), wait waits for all of
// them up to a limit, and closeAll closes the connections.
func openBlocked(addr string, c config) (calls []blockedCall, wait func(time.Duration) bool, closeAll func(), err error) {
	calls = make([]blockedCall, c.Blocked)
	var wg sync.WaitGroup
	var conns []*h2client.Conn
	closeAll = func() {
		for _, hc := range conns {
			hc.Close()
		}
	}
	wait = func(limit time.Duration) bool {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
			return true
		case <-time.After(limit):
			return false
		}
	}
	if c.Blocked == 0 {
		return calls, wait, closeAll, nil
	}
	for range c.BlockedConns {
		hc, err := h2client.Dial(addr, h2client.Options{Capture: true, Timeout: 5 * time.Second})
		if err != nil {
			closeAll()
			return nil, nil, nil, fmt.Errorf("dial for the blocked requests: %w", err)
		}
		conns = append(conns, hc)
	}
	req := &h2client.Request{Method: "GET", Path: "/slow?ms=" + strconv.FormatInt(c.BlockFor.Milliseconds(), 10), Authority: addr}
	var sent sync.WaitGroup
	for i := range calls {
		hc := conns[i%len(conns)]
		wg.Add(1)
		sent.Add(1)
		go func(b *blockedCall) {
			defer wg.Done()
			start := time.Now()
			sent.Done() // Do writes its HEADERS at once: validate leaves no stream waiting for a slot
			b.resp, b.err = hc.Do(req)
			b.elapsed = time.Since(start)
		}(&calls[i])
	}
	sent.Wait()
	// Let the HEADERS leave and the handlers start before the load does.
	time.Sleep(200 * time.Millisecond)
	return calls, wait, closeAll, nil
}
