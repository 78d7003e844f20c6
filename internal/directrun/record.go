package directrun

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Where a handler runs is learnt per route. A handler that does not wait runs
// in place at the cost of an inline one; a handler that waits (a database, a
// remote call, a sleep) holds its loop, with every connection on it, until it
// returns or the loop moves off it, and runs better on a worker, where its
// waits overlap. A route's Record says which its handler is, from what its
// runs in place showed: one that made the loop move (a Wake, Detach, the
// watch) waits at once; otherwise a run that held the loop longer than the
// protocol's threshold (slow) adds a strike and a quick one takes one back,
// and Strikes make a handler one that waits. A handler that waits on most of
// its runs is caught within a few more than Strikes runs; one that waits on a
// few (a cache miss) only after a run of bad luck, or never; a host that
// preempts the loop's thread now and then (a slow run of a quick handler)
// does not make one. From then on the protocols run the route's requests on
// workers, for good.

// DefaultSlow is a run in place's default threshold: the Go scheduler's own for
// taking a processor from a goroutine blocked in a system call (sysmon's
// shortest period). A handler doing that much work gains little in place (a
// hand-off to a worker costs about a microsecond), and one that waits longer
// holds its loop's other connections back.
const DefaultSlow = 20 * time.Microsecond

// Strikes is the count of slow runs, less the quick ones since, that make a
// handler one that waits.
const Strikes = 8

// Record is a route's record of its handler's runs in place. Its zero value is
// a handler not seen to wait. Every method is safe for concurrent use; nil is
// a Record that keeps nothing and always allows a run in place. A quick run
// only reads it, unless a slow one came before: many loops share it.
type Record struct {
	waits   atomic.Bool
	strikes atomic.Int32
}

// InPlace reports whether the handler may run in place: it was not seen to wait.
func (r *Record) InPlace() bool { return r == nil || !r.waits.Load() }

// Waits reports whether the handler was seen to wait.
func (r *Record) Waits() bool { return r != nil && r.waits.Load() }

// Moved records that the loop moved off a run of the handler in place.
func (r *Record) Moved() {
	if r != nil && !r.waits.Load() {
		r.waits.Store(true)
	}
}

// Ran records a run in place from start to end (Ticks); slow is the threshold
// in Ticks (SlowTicks).
func (r *Record) Ran(start, end, slow int64) {
	if r == nil {
		return
	}
	if end-start > slow {
		if r.strikes.Add(1) >= Strikes {
			r.waits.Store(true)
		}
	} else if r.strikes.Load() > 0 {
		r.strikes.Add(-1)
	}
}

// Ticks' rate, measured (Calibrate) between the package's start and the first
// server's start.
var (
	calOnce  sync.Once
	calTicks = Ticks()
	calTime  = time.Now()
	perNano  atomic.Uint64 // Ticks per nanosecond, as math.Float64bits
)

func init() { perNano.Store(math.Float64bits(1)) }

// Calibrate measures Ticks' rate against the monotonic clock, once per process,
// over the time since the package started, a millisecond at least (it waits
// what is left of it). Servers call it as they start; until then a tick counts
// as a nanosecond.
func Calibrate() {
	calOnce.Do(func() {
		if d := time.Since(calTime); d < time.Millisecond {
			time.Sleep(time.Millisecond - d)
		}
		t, d := Ticks(), time.Since(calTime)
		r := float64(t-calTicks) / float64(d)
		if !(r > 0) {
			// A counter that does not advance: no run is slow, and only
			// moves teach (Moved).
			r = 1
		}
		perNano.Store(math.Float64bits(r))
	})
}

// SlowTicks is d in Ticks, for Record.Ran: 0 for d <= 0 (every run is slow).
func SlowTicks(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(math.Float64frombits(perNano.Load()) * float64(d))
}
