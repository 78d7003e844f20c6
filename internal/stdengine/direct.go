package stdengine

import (
	"errors"

	"github.com/celeris-dev/celeris/internal/directrun"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Direct runs (httpmsg.DirectRunner). A connection has a goroutine of its own,
// which may run a handler itself instead of handing the request to a worker and
// taking the answer back (two goroutine switches and a wake-up per request: about
// 14 % of the CPU of a short HTTP/1.1 request). While the handler runs, nobody
// reads the socket; whatever needs the loop meanwhile detaches: the loop goes on
// in a new goroutine, the handler stays where it is and is a worker's from then
// on. That is the protocol's business (a Wake, or Detach: httpmsg.DirectRunner)
// and the engine's: a handler still running after directrun.Period is detached
// by the engine's watcher, so that a client that leaves is read, and its end
// cancels the handler's context, as on a worker. The run's state and the watch
// are internal/directrun's, shared with the epoll engine.

// watcher is the engine's direct-run watch.
type watcher = directrun.Watcher

// errMoved ends a loop whose goroutine stays with a detached handler.
var errMoved = errors.New("stdengine: the loop moved to another goroutine")

// vars are c's direct-run words.
func (c *conn) vars() directrun.Vars {
	return directrun.Vars{State: &c.dstate, AtTick: &c.dstateAtTick, Listed: &c.watchState}
}

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
	if c.vars().Detach() {
		c.moved()
	}
}

// moved starts the goroutine that owns c once its direct run was detached, and
// has it run the protocol's OnWake first (httpmsg.DirectRunner): what the run
// produced on the loop's behalf goes out now, not with the client's next input.
func (c *conn) moved() {
	// The task learns of it (httpmsg.MoveObserver) before anyone else owns c.
	if o, ok := c.runTask.(httpmsg.MoveObserver); ok {
		o.Moved()
	}
	go c.run()
	c.wakeUp()
}

// Watch is the watcher's tick for c (directrun.Owner): a run that was in
// progress at the previous tick and still is has run for a period at least: it
// is detached, and a new goroutine becomes the owner.
func (c *conn) Watch() bool {
	detach, keep := c.vars().Tick()
	if detach {
		c.moved()
	}
	return keep
}

// runDirect runs t on the owner goroutine. It reports false when t detached:
// another goroutine owns the connection now and this one must leave it alone.
// Either way the protocol's OnWake follows (httpmsg.DirectRunner): on this
// goroutine's next turn when t ended here, by a wake-up when it detached.
func (c *conn) runDirect(t httpmsg.Task) bool {
	v := c.vars()
	c.runTask = t
	s := v.Begin(&c.eng.watch, c)
	t.Run()
	if v.End(s) {
		c.runTask = nil
		c.woken.Store(true)
		return true
	}
	c.wakeUp() // the run's final hand-off, for the new owner
	return false
}
