package h2

import (
	"sync"
	"sync/atomic"

	"github.com/celeris-dev/celeris/internal/directrun"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Handlers run in place (httpmsg.DirectRunner). A request that would go to a
// worker (its route is not inline), whose body is complete (END_STREAM on its
// HEADERS) and that arrives while nothing waits for output, is queued on d.dq
// instead; the first one of a callback asks the engine for a direct run, which
// serves the queue one stream after another on the loop's goroutine once
// OnData returned. While a handler runs there and the loop does not, it writes
// as an inline handler does (headers encoded and DATA framed into c.out
// straight from the caller's fields and bytes, no copy into the stream's shared
// part, no wake-up), and its return finishes the stream as an inline one's
// does; the engine runs OnWake after the run, which hands c.out over.
//
// The engine may move the loop to another goroutine at any moment (its watch
// detaches a run that lasts): the loop's goroutine then serves the connection
// again while the handler goes on. So whatever a run does as the loop (a
// handler's writes in place, the finishing of a stream, starting the next) it
// does holding d.mu, and only while its stream is inPlace; every entry of the
// engine into the Conn (enter) first takes d.mu and ends the run: the stream
// in place becomes a worker's (its later writes queue on s.sh under c.mu and
// wake the loop), the streams not started go to the pool. A handler in place
// that would wait for the loop (output past maxQueued, a Flush that must reach
// the client now) ends the run itself the same way (leave) and wakes the loop,
// which detaches it. A flow-control wait therefore always happens on a
// goroutine that is not the loop's, and a handler that blocks holds the other
// streams of its connection for no longer than the engine's watch (their
// output produced in place before it goes out with the loop's next pass over
// the connection). Lock order: d.mu before c.mu.
//
// When the engine's watch moves the loop on, it runs OnWake
// (httpmsg.DirectRunner), which enters the Conn, ends the run and hands over
// the output of the run's earlier streams, waiting in c.out.
//
// Streams queued for a run are counted in c.handlers and running from the
// moment they are queued, so MaxHandlersPerConn bounds handlers in place and on
// workers together (CVE-2023-44487, CVE-2025-8671).

// Direct-run states (directState.state).
const (
	dirNone uint32 = iota // no run: the loop owns everything
	dirRun                // a run owns the loop's state (queued or running)
	dirLeft               // a handler left its run: d.dq holds streams for the loop
)

// directRun is the httpmsg.Task of a Conn's direct run.
type directRun Conn

// directState is a Conn's direct-run bookkeeping.
type directState struct {
	dr     httpmsg.DirectRunner // nil: the engine cannot run handlers in place
	inData bool                 // OnData runs (a direct run may be asked for)
	state  atomic.Uint32        // dirNone, dirRun or dirLeft
	mu     sync.Mutex           // held by whoever acts as the loop while state is not dirNone
	// Guarded by mu while state is not dirNone, the loop's otherwise.
	dq      []*stream // streams the run serves: dq[dqi:] not started
	dqi     int
	cur     *stream // the stream whose handler runs in place
	gen     uint64  // runs ended by enter: a run of an older gen stops
	placing bool    // the run frames another stream's output: no engine call
	// rec is the record of the stream whose handler runs in place, for Moved
	// (any goroutine).
	rec atomic.Pointer[directrun.Record]
}

// runInPlace queues s for the direct run of this callback (asking for one if
// none is asked yet) and reports whether it did. Loop, from dispatch.
func (c *Conn) runInPlace(s *stream) bool {
	d := &c.d
	if d.dr == nil || !d.inData || !s.remoteDone || s.tunnel || c.heldBack || len(c.sendq) > 0 ||
		!s.req.InPlace.InPlace() {
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

// Moved records that the loop moved off the handler in place
// (httpmsg.MoveObserver): its route's handler waits (Request.InPlace), and its
// requests go to workers from now on.
func (r *directRun) Moved() { r.d.rec.Load().Moved() }

// Run serves the queued streams in place (the engine's goroutine for the loop).
func (r *directRun) Run() {
	c := (*Conn)(r)
	d := &c.d
	t0 := directrun.Ticks()
	d.mu.Lock()
	gen := d.gen
	// Only endRun (gen) and leave (which makes this return) end the run.
	for d.gen == gen && d.dqi < len(d.dq) {
		s := d.dq[d.dqi]
		d.dq[d.dqi] = nil
		d.dqi++
		s.inPlace = true
		d.cur = s
		rec := s.req.InPlace
		if d.rec.Load() != rec {
			d.rec.Store(rec) // a store (and its write barrier) only when the route changes
		}
		d.mu.Unlock()
		c.h.Serve(&s.req, s)
		// Timed from the end of the previous stream's (or the run's start):
		// one clock read per stream.
		t1 := directrun.Ticks()
		rec.Ran(t0, t1, c.cfg.SlowTicks)
		t0 = t1
		d.mu.Lock()
		if !s.inPlace {
			// A worker's now: the loop runs elsewhere and owns d.dq again.
			d.mu.Unlock()
			c.mu.Lock()
			s.sh.done = true
			wake := c.notifyLocked(s)
			ctx := s.ctx.Load()
			c.mu.Unlock()
			ctx.cancel() // Serve returned
			if wake {
				c.nc.Wake()
			}
			return
		}
		// Still the loop: finish as an inline handler's return does. From
		// here the stream is the loop's alone, as an inline one is (its shared
		// part never reached the ready list: writer.go), so it is finished as
		// one, without c.mu.
		s.inPlace = false
		d.cur = nil
		s.inline = true
		s.ctx.Load().cancel() // Serve returned
		s.running = false
		c.handlers--
		c.handlerReturned(s) // frames into c.out only
		if len(c.waiting) > 0 {
			d.placing = true // a refusal's DATA must not reach the engine now
			c.startWaiting()
			d.placing = false
		}
	}
	if d.gen == gen {
		d.dq, d.dqi = d.dq[:0], 0
		d.state.Store(dirNone)
	}
	d.mu.Unlock()
}

// enter ends a direct run that may still hold the loop's state: every entry of
// the engine into the Conn calls it first (loop). The handler in place, if
// any, becomes a worker's; streams not started go to the pool.
func (c *Conn) enter() {
	if c.d.state.Load() != dirNone {
		c.endRun()
	}
}

// endRun is enter's work when a run may hold the loop's state.
func (c *Conn) endRun() {
	d := &c.d
	d.mu.Lock()
	if s := d.cur; s != nil {
		s.inPlace = false
		d.cur = nil
	}
	left := d.dq[d.dqi:]
	d.dq, d.dqi = nil, 0
	d.gen++
	d.state.Store(dirNone)
	d.mu.Unlock()
	for _, s := range left {
		c.submit(s)
	}
	if len(c.out) > 0 {
		// Output framed in place: an entry that does not end with afterIO
		// (Busy, DrainLevel: the engine settling a connection it took over)
		// gets it out with the next OnWake.
		c.nc.Wake()
	}
}

// place takes d.mu and reports whether s's handler runs in place, framing its
// output as the loop (d.unplace ends that); when not, d.mu is released. While
// s is inPlace its output never calls the engine (sendData, holdData): the
// engine may have moved the loop to another goroutine.
func (s *stream) place() bool {
	d := &s.c.d
	if d.dr == nil {
		return false
	}
	d.mu.Lock()
	if s.inPlace {
		return true
	}
	d.mu.Unlock()
	return false
}

// unplace ends what place began.
func (d *directState) unplace() { d.mu.Unlock() }

// leave ends the run of s, in place, from its handler, which is about to wait
// for the loop: s becomes a worker's stream, the streams not started wait for
// the loop's next entry, and the loop is woken (which detaches the run). Called
// between place and unplace; returns with d.mu released.
func (c *Conn) leave(s *stream) {
	d := &c.d
	s.inPlace = false
	d.cur = nil
	d.state.Store(dirLeft)
	d.mu.Unlock()
	d.dr.Detach()
	c.nc.Wake()
}
