package stdengine

import (
	"errors"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Direct runs (httpmsg.DirectRunner). A connection has a goroutine of its own,
// which may run a handler itself instead of handing the request to a worker and
// taking the answer back (two goroutine switches and a wake-up per request: about
// 14 % of the CPU of a short HTTP/1.1 request). While the handler runs, nobody
// reads the socket; whatever needs the loop meanwhile detaches: the loop goes on
// in a new goroutine, the handler stays where it is and is a worker's from then
// on. That is the protocol's business (output before the end, an interim answer,
// a hijack: httpmsg.DirectRunner) and the engine's: a handler still running after
// directWatch is detached by a timer, so that a client that leaves is read, and
// its end cancels the handler's context, as on a worker.
//
// dstate packs the number of the last direct run (the owner counts them) with its
// state, so that every transition names the run it is about: run<<2 | state.
// A run goes running -> idle (its goroutine, when the handler returned without a
// detach) or running -> moved (Detach or the watch, whichever comes first). The
// goroutine a detached run leaves only tries moved -> idle for its own run, so
// the new owner may start the next run at once.
const (
	directIdle uint64 = iota
	directRunning
	directMoved
	directMask = 3
)

// directWatch is the period of a connection's watch timer while handlers run on
// its goroutine: a handler still running after one to two periods is detached,
// so that a reader takes the loop over (disconnects, graceful shutdown, engine
// stop). The timer is not set per request (a runtime timer's reset and stop
// were 870 instructions per request, 10 % of a short one): it is armed by the
// first direct run while disarmed, and at each firing it detaches the run it also
// saw at the previous firing, re-arms while runs go on, and disarms when the
// connection was idle for a period. A busy connection costs one firing per period.
const directWatch = 5 * time.Millisecond

// Watch timer states (tstate).
const (
	timerIdle int32 = iota
	timerArmed
)

// errMoved ends a loop whose goroutine stays with a detached handler.
var errMoved = errors.New("stdengine: the loop moved to another goroutine")

// RunDirect takes t to run after the protocol's callback returns (loop).
func (c *conn) RunDirect(t httpmsg.Task) bool {
	if c.direct != nil {
		return false
	}
	c.direct = t
	return true
}

// Detach moves the loop off a directly running handler's goroutine (any
// goroutine; a no-op unless a direct run is in progress and not yet detached).
func (c *conn) Detach() {
	if v := c.dstate.Load(); v&directMask == directRunning &&
		c.dstate.CompareAndSwap(v, v&^directMask|directMoved) {
		go c.run()
	}
}

// watch is the timer's function. A run that was in progress at the previous
// firing and still is has run for a period at least: it is detached, and the
// timer's goroutine becomes the owner.
func (c *conn) watch() {
	v, prev := c.dstate.Load(), c.dseen.Load()
	running := v&directMask == directRunning
	if running && v == prev && c.dstate.CompareAndSwap(v, v&^directMask|directMoved) {
		c.tstate.Store(timerIdle) // the next direct run arms it again
		c.run()
		return
	}
	c.dseen.Store(v)
	if running || v>>2 != prev>>2 {
		// Runs went on since the previous firing: look again in a period.
		c.dtimer.Reset(directWatch)
		return
	}
	// Idle for a period: disarm. A run that began meanwhile arms the timer
	// itself unless it saw it armed; then this sees it running and re-arms
	// (runDirect stores running, then loads tstate; this stores tstate, then
	// loads running).
	c.tstate.Store(timerIdle)
	if c.dstate.Load()&directMask == directRunning && c.tstate.CompareAndSwap(timerIdle, timerArmed) {
		c.dtimer.Reset(directWatch)
	}
}

// runDirect runs t on the owner goroutine. It reports false when t detached:
// another goroutine owns the connection now and this one must leave it alone.
func (c *conn) runDirect(t httpmsg.Task) bool {
	if c.dtimer == nil {
		// Made stopped, before the atomics below that the timer's goroutine
		// loads first: they order this write before its reads.
		c.dtimer = time.AfterFunc(time.Hour, c.watch)
		c.dtimer.Stop()
	}
	run := (c.dstate.Load()>>2 + 1) << 2 // only the owner starts runs
	c.dstate.Store(run | directRunning)
	if c.tstate.Load() == timerIdle && c.tstate.CompareAndSwap(timerIdle, timerArmed) {
		c.dtimer.Reset(directWatch)
	}
	t.Run()
	if c.dstate.CompareAndSwap(run|directRunning, run|directIdle) {
		return true
	}
	// Detached: the goroutine that took the loop over owns the connection and
	// may have started the next run already; this one only closes its own.
	c.dstate.CompareAndSwap(run|directMoved, run|directIdle)
	return false
}
