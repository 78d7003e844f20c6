package h2

import (
	"sync/atomic"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Handlers run in place (httpmsg.DirectRunner). A request that would go to a
// worker (its route is not inline), whose body is complete (END_STREAM on its
// HEADERS) and that arrives while nothing waits for output, is queued on c.dq
// instead; the first one of a callback asks the engine for a direct run, which
// serves the queue one stream after another on the loop's goroutine once
// OnData returned. While a handler runs there and the loop does not, it writes
// as an inline handler does (headers encoded and DATA framed into c.out
// straight from the caller's fields and bytes, no copy into the stream's shared
// part, no wake-up), and its return hands the stream to the OnWake that the
// engine runs after the run.
//
// The engine may move the loop to another goroutine at any moment (its watch
// detaches a run that lasts): the loop's goroutine then serves the connection
// again while the handler goes on. So everything a handler in place touches of
// the loop's state (c.out, the encoder, windows, the send queue, c.dq) it
// touches holding c.mu, and only while its stream is inPlace; every entry of
// the engine into the Conn (enter) first ends the run under c.mu: the stream in
// place becomes a worker's (its later writes queue on s.sh and wake the loop),
// the queued streams go to the pool. A handler in place that would wait for
// the loop (its output past maxQueued, a Flush that must reach the client now)
// ends the run itself the same way (leaveLocked) and wakes the loop, which
// detaches it. A flow-control wait therefore always happens on a goroutine
// that is not the loop's.
//
// Streams queued for a run are counted in c.handlers and running from the
// moment they are queued, so MaxHandlersPerConn bounds handlers in place and on
// workers together (CVE-2023-44487, CVE-2025-8671).

// Direct-run states (Conn.dstate).
const (
	dirNone uint32 = iota // no run: the loop owns everything
	dirRun                // a run owns the loop's state (queued or running)
	dirLeft               // a handler left its run: c.dq holds streams for the loop
)

// directRun is the httpmsg.Task of a Conn's direct run.
type directRun Conn

// directState is a Conn's direct-run bookkeeping.
type directState struct {
	dr     httpmsg.DirectRunner // nil: the engine cannot run handlers in place
	inData bool                 // OnData runs (a direct run may be asked for)
	state  atomic.Uint32        // dirNone, dirRun or dirLeft
	// Guarded by c.mu while state is not dirNone, the loop's otherwise.
	dq      []*stream // streams the run serves: dq[dqi:] not started
	dqi     int
	cur     *stream // the stream whose handler runs in place
	gen     uint64  // runs ended by enter: a run of an older gen stops
	placing bool    // a handler in place frames output: no engine call
}

// runInPlace queues s for the direct run of this callback (asking for one if
// none is asked yet) and reports whether it did. Loop, from dispatch.
func (c *Conn) runInPlace(s *stream) bool {
	d := &c.d
	if d.dr == nil || !d.inData || !s.remoteDone || s.tunnel || c.heldBack || len(c.sendq) > 0 {
		return false
	}
	switch d.state.Load() {
	case dirNone:
		if !d.dr.RunDirect((*directRun)(c)) {
			return false
		}
		d.state.Store(dirRun)
	case dirRun:
	default:
		return false
	}
	s.running = true
	c.handlers++
	d.dq = append(d.dq, s)
	return true
}

// Run serves the queued streams in place (the engine's goroutine for the loop).
func (r *directRun) Run() {
	c := (*Conn)(r)
	d := &c.d
	c.mu.Lock()
	gen := d.gen
	for d.gen == gen && d.state.Load() == dirRun && d.dqi < len(d.dq) {
		s := d.dq[d.dqi]
		d.dq[d.dqi] = nil
		d.dqi++
		s.inPlace = true
		d.cur = s
		c.mu.Unlock()
		c.h.Serve(&s.req, s)
		c.mu.Lock()
		own := s.inPlace
		s.inPlace = false
		if own {
			d.cur = nil
		}
		s.sh.done = true
		// The engine runs OnWake after the run, which services the ready list.
		wake := c.notifyLocked(s) && !own
		ctx := s.ctx.Load()
		c.mu.Unlock()
		ctx.cancel() // Serve returned
		if !own {
			// A worker's now: the loop runs elsewhere and owns c.dq again.
			if wake {
				c.nc.Wake()
			}
			return
		}
		c.mu.Lock()
	}
	if d.gen == gen && d.state.Load() == dirRun {
		d.dq, d.dqi = d.dq[:0], 0
		d.state.Store(dirNone)
	}
	c.mu.Unlock()
}

// enter ends a direct run that may still hold the loop's state: every entry of
// the engine into the Conn calls it first (loop). The handler in place, if
// any, becomes a worker's; streams not started go to the pool.
func (c *Conn) enter() {
	d := &c.d
	if d.state.Load() == dirNone {
		return
	}
	c.mu.Lock()
	if s := d.cur; s != nil {
		s.inPlace = false
		d.cur = nil
	}
	left := d.dq[d.dqi:]
	d.dq, d.dqi = nil, 0
	d.gen++
	d.state.Store(dirNone)
	c.mu.Unlock()
	for _, s := range left {
		c.submit(s)
	}
}

// leaveLocked ends the run of s, in place, from its handler, which is about to
// wait for the loop: s becomes a worker's stream, and the streams not started
// wait for the loop's next entry. The caller wakes the loop (which detaches the
// run) once c.mu is released. c.mu held, s.inPlace.
func (c *Conn) leaveLocked(s *stream) {
	s.inPlace = false
	c.d.cur = nil
	c.d.state.Store(dirLeft)
}

// leave is leaveLocked and the wake-up (c.mu held on entry and on return).
func (c *Conn) leave(s *stream) {
	c.leaveLocked(s)
	c.mu.Unlock()
	c.d.dr.Detach()
	c.nc.Wake()
	c.mu.Lock()
}
