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
// dstate: directIdle -> directRunning (the owner, runDirect) -> directIdle (the
// same goroutine, when the handler returned without a detach), or
// directRunning -> directMoved (Detach: the handler's goroutine or the timer's,
// whichever comes first) -> directIdle (the handler's goroutine once it
// returned; until then the new owner hands the next batch to the pool).
const (
	directIdle int32 = iota
	directRunning
	directMoved
)

// directWatch is how long a handler runs on the connection's goroutine before a
// reader takes the loop over (disconnects, graceful shutdown, engine stop).
const directWatch = 2 * time.Millisecond

// errMoved ends a loop whose goroutine stays with a detached handler.
var errMoved = errors.New("stdengine: the loop moved to another goroutine")

// RunDirect takes t to run after the protocol's callback returns (loop).
func (c *conn) RunDirect(t httpmsg.Task) bool {
	if c.direct != nil || c.dstate.Load() != directIdle {
		return false // a detached handler is still returning: the pool runs this one
	}
	c.direct = t
	return true
}

// Detach moves the loop off a directly running handler's goroutine (any
// goroutine; a no-op unless a direct run is in progress and not yet detached).
func (c *conn) Detach() {
	if c.dstate.CompareAndSwap(directRunning, directMoved) {
		go c.run()
	}
}

// watch is the timer's detach: the timer's goroutine becomes the owner.
func (c *conn) watch() {
	if c.dstate.CompareAndSwap(directRunning, directMoved) {
		c.run()
	}
}

// runDirect runs t on the owner goroutine. It reports false when t detached:
// another goroutine owns the connection now and this one must leave it alone.
func (c *conn) runDirect(t httpmsg.Task) bool {
	c.dstate.Store(directRunning)
	if c.dtimer == nil {
		c.dwatch = c.watch
		c.dtimer = time.AfterFunc(directWatch, c.dwatch)
	} else {
		c.dtimer.Reset(directWatch)
	}
	t.Run()
	if c.dstate.CompareAndSwap(directRunning, directIdle) {
		c.dtimer.Stop() // a late firing finds the state idle and does nothing
		return true
	}
	// Detached. The timer and dstate are this goroutine's until it stores idle.
	c.dtimer.Stop()
	c.dstate.Store(directIdle)
	return false
}
