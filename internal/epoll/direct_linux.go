package epoll

import (
	"github.com/celeris-dev/celeris/internal/directrun"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Direct runs (httpmsg.DirectRunner). A loop is one goroutine serving many
// connections; a handler the protocol asks to run directly runs on it, after
// the callback that asked (OnData, OnWake) returned, instead of going to a
// worker and coming back with a wake-up: no hand-off to a pool, no goroutine
// switch, no second pass over the loop's queue. When the handler returns
// undetached the loop serves the connection's wake-up at once (the protocol's
// OnWake, then its held input and the output batch) and goes on with its
// batch of events.
//
// While the handler runs, the loop does not, and no other connection of the
// loop is served. The loop moves instead of waiting: a Wake of the running
// connection (a protocol handing output over before the end, an interim
// answer, a hijack), Detach, or the engine's watch (directrun: a run seen at
// two of its ticks, so after directrun.Period to twice that) start a new
// goroutine that takes the loop over (its epoll, connection table, the rest of
// the batches in progress, timers) while the old goroutine finishes the
// handler as a worker and then leaves the loop alone. The new owner gets a
// read buffer of its own, so nothing the handler may still hold is reused
// under it. A blocking handler thus stalls the other connections of its loop
// for at most twice directrun.Period.

// RunDirect takes t to run on the loop once the current callback returns
// (httpmsg.DirectRunner; loop only). One run at a time per loop: a second
// asked for in the same callback is refused, as is one asked for outside the
// events and wake-ups the loop serves (draining).
func (c *conn) RunDirect(t httpmsg.Task) bool {
	l := c.l
	l.own.check("Conn.RunDirect")
	if !l.directOK || l.direct != nil || !l.e.cfg.Direct {
		return false
	}
	l.direct, l.directConn = t, c
	return true
}

// Detach moves the loop off the goroutine running c's direct run (any
// goroutine; a no-op unless c's run is in progress and not detached).
func (c *conn) Detach() {
	if c.l.running.Load() == int32(c.fd) {
		c.l.detach()
	}
}

// detach moves the loop to a new goroutine if a run is in progress (any
// goroutine).
func (l *loop) detach() {
	if l.dv.Detach() {
		l.moved()
	}
}

// Watch is the watcher's tick for the loop (directrun.Owner).
func (l *loop) Watch() bool {
	detach, keep := l.dv.Tick()
	if detach {
		l.moved()
	}
	return keep
}

// moved is the move of the run in progress, by the goroutine that detached it:
// the task learns of it (httpmsg.MoveObserver), then a new goroutine takes the
// loop over. Until then nobody else touches l.runTask: the run's goroutine
// has let the loop go, and the next run's owner does not exist yet.
func (l *loop) moved() {
	if o, ok := l.runTask.(httpmsg.MoveObserver); ok {
		o.Moved()
	}
	go l.takeOver()
}

// takeOver is the goroutine a detached run's loop moves to.
func (l *loop) takeOver() {
	l.own.claim()
	l.running.Store(-1)
	l.buf = make([]byte, len(l.buf)) // the old one stays with the handler's goroutine
	if c := l.owed; c != nil {
		// The event that asked for the run ended without its settle (readable
		// leaves it to the run's wake-up): output queued before the run
		// leaves now, and reading goes on or pauses as the connection's state says.
		l.owed = nil
		c.settle()
		// The protocol's OnWake follows a move (httpmsg.DirectRunner): what the
		// run produced on the loop's behalf goes out now, not with the
		// client's next input.
		c.Wake()
	}
	l.serve()
}

// runDirect runs the direct run asked for, then its connection's wake-up, and
// again while that wake-up asks for another (loop). It reports false when a
// run was detached: the loop is another goroutine's now, and the caller must
// return without touching it.
func (l *loop) runDirect() bool {
	for l.direct != nil {
		t, c := l.direct, l.directConn
		l.direct, l.directConn, l.owed = nil, nil, c
		l.runTask = t
		s := directrun.Start(&l.dstate) // l.dv.Begin, inlined
		if l.watchState.Load() == directrun.Unlisted {
			l.dv.List(&l.e.watch, l)
		}
		l.running.Store(int32(c.fd))
		t.Run()
		if !directrun.EndHere(&l.dstate, s) && !l.dv.End(s) {
			// Detached: the new owner serves the final hand-off's wake-up.
			c.Wake()
			return false
		}
		l.running.Store(-1)
		l.owed, l.runTask = nil, nil
		// The run's wake-up, now (httpmsg.DirectRunner): its answer goes out
		// in this event's write. No Wake was queued for it (the protocol's
		// final hand-off wakes nobody); one queued meanwhile stays, and finds
		// nothing left to do.
		if c.done || c.lingering {
			continue
		}
		l.directOK = true
		c.core.Wake()
		if c.inOff != len(c.in) && !c.core.Closing() && !c.flushEnd {
			c.feedBuffered() // requests held back while the run ran
		}
		l.directOK = false
		c.settle()
	}
	return true
}
