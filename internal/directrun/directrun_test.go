package directrun

import (
	"sync/atomic"
	"testing"
)

// Every transition of a direct run's state, from every phase, for its own run
// and another's.
func TestStateTransitions(t *testing.T) {
	st := func(run, phase uint64) State { return State(run<<2 | phase) }
	type result struct {
		to State
		ok bool
	}
	res := func(to State, ok bool) result { return result{to, ok} }
	for _, tc := range []struct {
		name string
		got  result
		want result
	}{
		// Next: the owner starts a run, whatever the last one's phase.
		{"next from idle", result{st(3, Idle).Next(), true}, result{st(4, Running), true}},
		{"next from moved", result{st(3, Moved).Next(), true}, result{st(4, Running), true}},
		{"next from zero", result{State(0).Next(), true}, result{st(1, Running), true}},
		// Ended: the handler returned on its goroutine, not detached.
		{"ended running", res(st(4, Running).Ended(4)), result{st(4, Idle), true}},
		{"ended other run", res(st(5, Running).Ended(4)), result{st(5, Running), false}},
		{"ended moved", res(st(4, Moved).Ended(4)), result{st(4, Moved), false}},
		{"ended idle", res(st(4, Idle).Ended(4)), result{st(4, Idle), false}},
		// Moved: Detach or the watch.
		{"moved running", res(st(4, Running).Moved()), result{st(4, Moved), true}},
		{"moved twice", res(st(4, Moved).Moved()), result{st(4, Moved), false}},
		{"moved idle", res(st(4, Idle).Moved()), result{st(4, Idle), false}},
		// Released: the goroutine a detached run left returns.
		{"released own", res(st(4, Moved).Released(4)), result{st(4, Idle), true}},
		{"released after next run began", res(st(5, Running).Released(4)), result{st(5, Running), false}},
		{"released after next run ended", res(st(5, Idle).Released(4)), result{st(5, Idle), false}},
		{"released running", res(st(4, Running).Released(4)), result{st(4, Running), false}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// Stale: the watch detaches only a run it saw running, the same one, at
	// the previous tick.
	for _, tc := range []struct {
		name      string
		now, seen State
		want      bool
	}{
		{"same run, running both ticks", st(4, Running), st(4, Running), true},
		{"new run since", st(5, Running), st(4, Running), false},
		{"not seen running", st(4, Running), st(4, Idle), false},
		{"ended", st(4, Idle), st(4, Running), false},
		{"moved", st(4, Moved), st(4, Moved), false},
		{"never seen", st(1, Running), 0, false},
	} {
		if got := tc.now.Stale(tc.seen); got != tc.want {
			t.Errorf("stale %s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

type owner struct {
	state, atTick atomic.Uint64
	listed        atomic.Int32
}

func (o *owner) vars() Vars { return Vars{State: &o.state, AtTick: &o.atTick, Listed: &o.listed} }

// The sequences an owner goes through, on Vars: a run that ends, a run
// detached by Detach and then by the watch's second tick, and the watch
// unlisting an idle owner.
func TestVarsSequences(t *testing.T) {
	var w Watcher
	o := &owner{}
	v := o.vars()
	s := v.Begin(&w, nopOwner{})
	if !v.Running() || o.listed.Load() != Listed {
		t.Fatalf("after Begin: running %v, listed %d", v.Running(), o.listed.Load())
	}
	if !v.End(s) || v.Running() {
		t.Fatal("End of an undetached run: want true, idle")
	}
	// Detach: once only; End then reports the move and releases the run.
	s = v.Begin(&w, nopOwner{})
	if !v.Detach() || v.Detach() {
		t.Fatal("Detach: want true once, then false")
	}
	if v.End(s) || State(o.state.Load()) != State(s.Run()<<2|Idle) {
		t.Fatalf("End after Detach: want false and run %d idle, state %v", s.Run(), State(o.state.Load()))
	}
	// The watch: a run seen at one tick and the next is detached at the second.
	s = v.Begin(&w, nopOwner{})
	if d, keep := v.Tick(); d || !keep {
		t.Fatalf("first tick: detach %v keep %v, want false true", d, keep)
	}
	if d, keep := v.Tick(); !d || keep || o.listed.Load() != Unlisted {
		t.Fatalf("second tick: detach %v keep %v listed %d, want true false unlisted", d, keep, o.listed.Load())
	}
	if v.End(s) {
		t.Fatal("End after the watch's detach: want false")
	}
	// Idle for a period: unlisted at the second tick that saw no new run.
	s = v.Begin(&w, nopOwner{})
	v.End(s)
	if _, keep := v.Tick(); !keep {
		t.Fatal("a run ended since the previous tick: want kept")
	}
	if _, keep := v.Tick(); keep || o.listed.Load() != Unlisted {
		t.Fatal("idle for a period: want unlisted")
	}
}

type nopOwner struct{}

func (nopOwner) Watch() bool { return false }
