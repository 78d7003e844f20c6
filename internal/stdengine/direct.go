package stdengine

import (
	"errors"
	"sync"
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
// directWatch is detached by the engine's watcher, so that a client that leaves is read, and
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

// directWatch is the period of the engine's direct-run watch: a handler still
// running after one to two periods is detached, so that a reader takes the loop
// over (disconnects, graceful shutdown, engine stop). Nothing is set per request
// (a runtime timer reset and stopped per request was 870 instructions, 10 % of a
// short request, and a timer per connection firing every period cost a
// goroutine per firing: 3-4 % of the CPU with 128 busy connections): the first
// direct run of a busy period lists its connection with the engine's watcher, one
// goroutine on one ticker for the whole engine, which at each tick detaches a run
// it also saw at the previous tick, keeps the connections whose runs go on, and
// drops those idle for a period. It runs only while a connection is listed.
const directWatch = 5 * time.Millisecond

// Watch states of a connection (tstate): listed with the watcher or not.
const (
	watchUnlisted int32 = iota
	watchListed
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

// watch looks at c for the watcher's tick and reports whether c stays listed. A
// run that was in progress at the previous tick and still is has run for a
// period at least: it is detached, and a new goroutine becomes the owner.
func (c *conn) watch() bool {
	v, prev := c.dstate.Load(), c.dseen.Load()
	running := v&directMask == directRunning
	if running && v == prev && c.dstate.CompareAndSwap(v, v&^directMask|directMoved) {
		c.tstate.Store(watchUnlisted) // the next direct run lists c again
		go c.run()
		return false
	}
	c.dseen.Store(v)
	if running || v>>2 != prev>>2 {
		return true // runs went on since the previous tick
	}
	// Idle for a period: unlist. A run that began meanwhile lists c itself
	// unless it saw it listed; then this sees it running and keeps it
	// (runDirect stores running, then loads tstate; this stores tstate, then
	// loads running).
	c.tstate.Store(watchUnlisted)
	return c.dstate.Load()&directMask == directRunning && c.tstate.CompareAndSwap(watchUnlisted, watchListed)
}

// watcher is an engine's direct-run watch: the connections listed, and one
// goroutine that looks at them every directWatch while any is listed.
type watcher struct {
	mu      sync.Mutex
	list    []*conn // guarded by mu
	running bool    // guarded by mu: the goroutine runs
}

// add lists c (once per busy period: runDirect, on winning tstate).
func (w *watcher) add(c *conn) {
	w.mu.Lock()
	w.list = append(w.list, c)
	if !w.running {
		w.running = true
		go w.run()
	}
	w.mu.Unlock()
}

func (w *watcher) run() {
	t := time.NewTicker(directWatch)
	defer t.Stop()
	for range t.C {
		w.mu.Lock()
		keep := w.list[:0]
		for _, c := range w.list {
			if c.watch() {
				keep = append(keep, c)
			}
		}
		clear(w.list[len(keep):])
		w.list = keep
		if len(keep) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
	}
}

// runDirect runs t on the owner goroutine. It reports false when t detached:
// another goroutine owns the connection now and this one must leave it alone.
func (c *conn) runDirect(t httpmsg.Task) bool {
	run := (c.dstate.Load()>>2 + 1) << 2 // only the owner starts runs
	c.dstate.Store(run | directRunning)
	if c.tstate.Load() == watchUnlisted && c.tstate.CompareAndSwap(watchUnlisted, watchListed) {
		c.eng.watch.add(c)
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
