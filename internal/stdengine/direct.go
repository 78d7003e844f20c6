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
// A direct run's state is a directState: the run's number (the owner counts
// them) and its phase in one word, held in conn.dstate and changed only by
// compare-and-swap, so that every transition names the run it is about. A run
// goes running -> idle (its goroutine, when the handler returned without a
// detach) or running -> moved (Detach or the watch, whichever comes first). The
// goroutine a detached run leaves only tries moved -> idle for its own run, so
// the new owner may start the next run at once. The transitions are pure
// methods (direct_test.go has a table of every one); the goroutine starts that
// go with a move are the callers'.
type directState uint64

// Phases of a direct run.
const (
	directIdle uint64 = iota
	directRunning
	directMoved
	directMask = 3
)

// run is the run's number.
func (s directState) run() uint64 { return uint64(s) >> 2 }

// phase is directIdle, directRunning or directMoved.
func (s directState) phase() uint64 { return uint64(s) & directMask }

// next is the owner starting the next run: its number is one more, running.
func (s directState) next() directState {
	return directState((s.run()+1)<<2 | directRunning)
}

// ended is the handler of run r returning on the goroutine that runs it: it
// applies only while that run is running (not detached).
func (s directState) ended(r uint64) (directState, bool) {
	if s.run() != r || s.phase() != directRunning {
		return s, false
	}
	return directState(r<<2 | directIdle), true
}

// moved is a detach of the running run (Detach, or the watch): the loop goes
// to a new goroutine. It applies only while a run is running.
func (s directState) moved() (directState, bool) {
	if s.phase() != directRunning {
		return s, false
	}
	return directState(s.run()<<2 | directMoved), true
}

// stale reports whether the watch may detach s: a run still running that was
// already running, the same one, at the previous tick (seen).
func (s directState) stale(seen directState) bool {
	return s.phase() == directRunning && s == seen
}

// released is the goroutine a detached run r left returning: it applies only
// while r is the last run and moved (the new owner has not started another).
func (s directState) released(r uint64) (directState, bool) {
	if s.run() != r || s.phase() != directMoved {
		return s, false
	}
	return directState(r<<2 | directIdle), true
}

// swap applies a transition to c.dstate if c.dstate is still s.
func (c *conn) swap(s, to directState, ok bool) bool {
	return ok && c.dstate.CompareAndSwap(uint64(s), uint64(to))
}

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

// Watch states of a connection (watchState): listed with the watcher or not.
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
	s := directState(c.dstate.Load())
	if to, ok := s.moved(); c.swap(s, to, ok) {
		go c.run()
	}
}

// watch looks at c for the watcher's tick and reports whether c stays listed. A
// run that was in progress at the previous tick and still is has run for a
// period at least: it is detached, and a new goroutine becomes the owner.
func (c *conn) watch() bool {
	s, seen := directState(c.dstate.Load()), directState(c.dstateAtTick.Load())
	if to, ok := s.moved(); s.stale(seen) && c.swap(s, to, ok) {
		c.watchState.Store(watchUnlisted) // the next direct run lists c again
		go c.run()
		return false
	}
	c.dstateAtTick.Store(uint64(s))
	if s.phase() == directRunning || s.run() != seen.run() {
		return true // runs went on since the previous tick
	}
	// Idle for a period: unlist. A run that began meanwhile lists c itself
	// unless it saw it listed; then this sees it running and keeps it
	// (runDirect stores running, then loads watchState; this stores watchState, then
	// loads running).
	c.watchState.Store(watchUnlisted)
	return directState(c.dstate.Load()).phase() == directRunning && c.watchState.CompareAndSwap(watchUnlisted, watchListed)
}

// watcher is an engine's direct-run watch: the connections listed, and one
// goroutine that looks at them every directWatch while any is listed.
type watcher struct {
	mu      sync.Mutex
	list    []*conn // guarded by mu
	running bool    // guarded by mu: the goroutine runs
}

// add lists c (once per busy period: runDirect, on winning watchState).
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
	s := directState(c.dstate.Load()).next() // only the owner starts runs
	c.dstate.Store(uint64(s))
	if c.watchState.Load() == watchUnlisted && c.watchState.CompareAndSwap(watchUnlisted, watchListed) {
		c.eng.watch.add(c)
	}
	t.Run()
	if to, ok := s.ended(s.run()); c.swap(s, to, ok) {
		return true
	}
	// Detached: the goroutine that took the loop over owns the connection and
	// may have started the next run already; this one only closes its own.
	moved := directState(s.run()<<2 | directMoved)
	to, ok := moved.released(s.run())
	c.swap(moved, to, ok)
	return false
}
