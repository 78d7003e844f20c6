package directrun

import (
	"sync"
	"testing"
	"time"
)

// A route's record through runs in place: moves, slow runs, quick runs
// between them, and nil.
func TestRecord(t *testing.T) {
	const slow = 100
	const (
		quick = iota
		slowRun
		moved
	)
	rep := func(n int, ks ...int) (r []int) {
		for range n {
			r = append(r, ks...)
		}
		return r
	}
	cat := func(parts ...[]int) (r []int) {
		for _, p := range parts {
			r = append(r, p...)
		}
		return r
	}
	for _, tc := range []struct {
		name string
		runs []int
		want bool // waits
	}{
		{"new", nil, false},
		{"quick runs", rep(100, quick), false},
		{"moved once", []int{moved}, true},
		{"moved after quick runs", cat(rep(50, quick), []int{moved}), true},
		{"one slow run", []int{slowRun}, false},
		{"Strikes-1 slow runs", rep(Strikes-1, slowRun), false},
		{"Strikes slow runs", rep(Strikes, slowRun), true},
		{"Strikes slow runs after quick ones", cat(rep(100, quick), rep(Strikes, slowRun)), true},
		{"a quick run takes a strike back", cat(rep(Strikes-1, slowRun), []int{quick}, []int{slowRun}), false},
		{"then one more slow run", cat(rep(Strikes-1, slowRun), []int{quick}, rep(2, slowRun)), true},
		{"one slow run in twenty", rep(40, cat([]int{slowRun}, rep(19, quick))...), false},
		{"three slow runs in four", rep(Strikes, slowRun, slowRun, slowRun, quick), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Record
			for _, k := range tc.runs {
				switch k {
				case moved:
					r.Moved()
				case slowRun:
					r.Ran(1000, 1000+slow+1, slow)
				default:
					r.Ran(1000, 1000+slow, slow) // at the threshold: quick
				}
			}
			if got := r.Waits(); got != tc.want {
				t.Fatalf("Waits() = %v, want %v", got, tc.want)
			}
			if r.InPlace() == tc.want {
				t.Fatalf("InPlace() = %v, want %v", r.InPlace(), !tc.want)
			}
		})
	}
	var r *Record
	r.Moved()
	r.Ran(0, 1<<40, 0)
	if !r.InPlace() || r.Waits() {
		t.Fatal("a nil Record keeps nothing and allows every run in place")
	}
}

// Ticks advances at the rate Calibrate measured: 2 ms of the monotonic clock
// are 2 ms of Ticks, give or take the host's noise (a factor of 2 either way
// is plenty for thresholds of tens of microseconds).
func TestTicksCalibrated(t *testing.T) {
	Calibrate()
	t0, n0 := Ticks(), time.Now()
	for time.Since(n0) < 2*time.Millisecond {
	}
	got := float64(Ticks() - t0)
	want := float64(SlowTicks(time.Since(n0)))
	if got < want/2 || got > want*2 {
		t.Fatalf("%v of Ticks is %v ticks, Calibrate says %v", time.Since(n0), got, want)
	}
	if SlowTicks(0) != 0 || SlowTicks(time.Microsecond) < 0 {
		t.Fatalf("SlowTicks(0) = %d, SlowTicks(1µs) = %d", SlowTicks(0), SlowTicks(time.Microsecond))
	}
}

// Many loops share a route's record: slow and quick runs and moves from many
// goroutines at once (go test -race) end with a handler that waits once any
// goroutine moved it, and never with one that waits from quick runs alone.
func TestRecordShared(t *testing.T) {
	const slow = 100
	var quickOnly, mixed Record
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				quickOnly.Ran(0, slow, slow)
				mixed.Ran(0, slow+int64(i%2), slow)
				if g == 3 && i == 500 {
					mixed.Moved()
				}
			}
		}()
	}
	wg.Wait()
	if quickOnly.Waits() || !mixed.Waits() {
		t.Fatalf("quick only: waits %v; moved once: waits %v", quickOnly.Waits(), mixed.Waits())
	}
}
