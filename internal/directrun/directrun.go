// Package directrun is the state of direct runs (httpmsg.DirectRunner) shared
// by the engines that have them, and the engine-wide watch that detaches a run
// going on for too long.
//
// A direct run is a handler run by the goroutine that owns the loop (a
// connection's goroutine in the std engine, an event loop's in epoll) instead
// of a worker's. While it runs, the loop does not; a detach moves the loop to a
// new goroutine and leaves the handler where it is, a worker's from then on.
//
// A run's State is its number (the owner counts them) and its phase in one
// word, held in an atomic.Uint64 and changed only by compare-and-swap, so that
// every transition names the run it is about. A run goes running -> idle (its
// goroutine, when the handler returned without a detach) or running -> moved
// (Detach or the watch, whichever comes first). The goroutine a detached run
// leaves only tries moved -> idle for its own run, so the new owner may start
// the next run at once. The transitions are pure methods (directrun_test.go has
// a table of every one); the goroutine starts that go with a move are the
// callers'.
package directrun

import (
	"sync"
	"sync/atomic"
	"time"
)

// State is a direct run's number<<2 | its phase.
type State uint64

// Phases of a direct run.
const (
	Idle uint64 = iota
	Running
	Moved
	phaseMask = 3
)

// Run is the run's number.
func (s State) Run() uint64 { return uint64(s) >> 2 }

// Phase is Idle, Running or Moved.
func (s State) Phase() uint64 { return uint64(s) & phaseMask }

// Next is the owner starting the next run: its number is one more, running.
func (s State) Next() State { return State((s.Run()+1)<<2 | Running) }

// Ended is the handler of run r returning on the goroutine that runs it: it
// applies only while that run is running (not detached).
func (s State) Ended(r uint64) (State, bool) {
	if s.Run() != r || s.Phase() != Running {
		return s, false
	}
	return State(r<<2 | Idle), true
}

// Moved is a detach of the running run (Detach, or the watch): the loop goes
// to a new goroutine. It applies only while a run is running.
func (s State) Moved() (State, bool) {
	if s.Phase() != Running {
		return s, false
	}
	return State(s.Run()<<2 | Moved), true
}

// Stale reports whether the watch may detach s: a run still running that was
// already running, the same one, at the previous tick (seen).
func (s State) Stale(seen State) bool { return s.Phase() == Running && s == seen }

// Released is the goroutine a detached run r left returning: it applies only
// while r is the last run and moved (the new owner has not started another).
func (s State) Released(r uint64) (State, bool) {
	if s.Run() != r || s.Phase() != Moved {
		return s, false
	}
	return State(r<<2 | Idle), true
}

// swap applies a transition to v if v still holds s.
func swap(v *atomic.Uint64, s, to State, ok bool) bool {
	return ok && v.CompareAndSwap(uint64(s), uint64(to))
}

// Period is the watch's period: a handler still running after one to two
// periods is detached, so that a reader takes the loop over (other
// connections of the loop, disconnects, graceful shutdown, engine stop).
// Nothing is set per request (a runtime timer reset and stopped per request
// costs about 10 % of a short request): the first direct run of a busy period
// lists its owner with the engine's Watcher, one goroutine on one ticker for
// the whole engine, which at each tick detaches a run it also saw at the
// previous tick, keeps the owners whose runs go on, and drops those idle for a
// period. It runs only while an owner is listed.
const Period = 5 * time.Millisecond

// Watch states of an owner: listed with the watcher or not.
const (
	Unlisted int32 = iota
	Listed
)

// Vars are an owner's direct-run words, and how it moves.
type Vars struct {
	State  *atomic.Uint64 // the last run's State
	AtTick *atomic.Uint64 // State at the watcher's previous tick
	Listed *atomic.Int32  // Unlisted or Listed
}

// Begin starts the owner's next run (owner only) and lists it with w unless
// it is listed; it returns the run's State, for End.
func (v Vars) Begin(w *Watcher, o Owner) State {
	s := Start(v.State)
	if v.Listed.Load() == Unlisted {
		v.List(w, o)
	}
	return s
}

// Start is Begin's first half, for an owner that inlines Begin: the next run,
// stored in state.
func Start(state *atomic.Uint64) State {
	s := State((state.Load()>>2+1)<<2 | Running) // State.Next, spelt out to inline
	state.Store(uint64(s))
	return s
}

// EndHere is End's fast path, for an owner that inlines End: true when run s
// ended undetached (State.Ended, as a compare-and-swap of s running); else
// the caller calls End.
func EndHere(state *atomic.Uint64, s State) bool {
	return state.CompareAndSwap(uint64(s), uint64(s)&^phaseMask)
}

// List is Begin's second half: it lists the owner with w unless it is listed.
func (v Vars) List(w *Watcher, o Owner) {
	if v.Listed.CompareAndSwap(Unlisted, Listed) {
		w.add(o)
	}
}

// End is run s's handler returning on the goroutine that ran it. It reports
// true when the run ended there, undetached: the goroutine still owns the
// loop. False: the run was detached, another goroutine owns the loop (and may
// have started the next run already); this one has let its run go and must
// leave the loop alone.
func (v Vars) End(s State) bool {
	if EndHere(v.State, s) {
		return true
	}
	moved := State(s.Run()<<2 | Moved)
	to, ok := moved.Released(s.Run())
	swap(v.State, moved, to, ok)
	return false
}

// Detach moves the running run (any goroutine): it reports true when this call
// did, and the caller starts the goroutine that takes the loop over.
func (v Vars) Detach() bool {
	s := State(v.State.Load())
	to, ok := s.Moved()
	return swap(v.State, s, to, ok)
}

// Running reports whether a run is in progress and not detached.
func (v Vars) Running() bool { return State(v.State.Load()).Phase() == Running }

// Tick is the watcher's look at an owner: detach reports that the run in
// progress was detached (the caller starts the new owner; the owner is
// unlisted), keep whether the owner stays listed.
func (v Vars) Tick() (detach, keep bool) {
	s, seen := State(v.State.Load()), State(v.AtTick.Load())
	if to, ok := s.Moved(); s.Stale(seen) && swap(v.State, s, to, ok) {
		v.Listed.Store(Unlisted) // the next direct run lists the owner again
		return true, false
	}
	v.AtTick.Store(uint64(s))
	if s.Phase() == Running || s.Run() != seen.Run() {
		return false, true // runs went on since the previous tick
	}
	// Idle for a period: unlist. A run that began meanwhile lists the owner
	// itself unless it saw it listed; then this sees it running and keeps it
	// (Begin stores running, then loads Listed; this stores Listed, then loads
	// running).
	v.Listed.Store(Unlisted)
	return false, State(v.State.Load()).Phase() == Running && v.Listed.CompareAndSwap(Unlisted, Listed)
}

// Owner is what the watcher looks at: a connection (std) or a loop (epoll).
type Owner interface {
	// Watch is the tick (Vars.Tick, and the move when it detached); it
	// reports whether the owner stays listed.
	Watch() bool
}

// Watcher is an engine's direct-run watch: the owners listed, and one
// goroutine that looks at them every Period while any is listed.
type Watcher struct {
	mu      sync.Mutex
	list    []Owner // guarded by mu
	running bool    // guarded by mu: the goroutine runs
}

// add lists o (once per busy period: Begin, on winning Listed).
func (w *Watcher) add(o Owner) {
	w.mu.Lock()
	w.list = append(w.list, o)
	if !w.running {
		w.running = true
		go w.run()
	}
	w.mu.Unlock()
}

func (w *Watcher) run() {
	t := time.NewTicker(Period)
	defer t.Stop()
	for range t.C {
		w.mu.Lock()
		keep := w.list[:0]
		for _, o := range w.list {
			if o.Watch() {
				keep = append(keep, o)
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
