package work

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
)

type fnTask func()

func (f fnTask) Run() { f() }

func TestBlockedTasksDoNotDelayOthers(t *testing.T) {
	p := NewPool(0, time.Second)
	defer p.Stop()
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 64; i++ {
		wg.Add(1)
		if !p.Submit(fnTask(func() { defer wg.Done(); <-release })) {
			t.Fatal("submit refused")
		}
	}
	done := make(chan struct{})
	p.Submit(fnTask(func() { close(done) }))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a task waited behind blocked tasks")
	}
	close(release)
	wg.Wait()
	if n := p.Workers(); n < 65 {
		t.Fatalf("workers = %d, want >= 65", n)
	}
}

func TestLimitAndReuse(t *testing.T) {
	p := NewPool(2, time.Second)
	defer p.Stop()
	var ran atomic.Int32
	for i := 0; i < 100; i++ {
		done := make(chan struct{})
		if !p.Submit(fnTask(func() { ran.Add(1); close(done) })) {
			t.Fatal("submit refused under limit")
		}
		<-done
	}
	if ran.Load() != 100 {
		t.Fatal("tasks lost")
	}
	block := make(chan struct{})
	p2 := NewPool(1, time.Second)
	defer p2.Stop()
	p2.Submit(fnTask(func() { <-block }))
	if p2.Submit(fnTask(func() {})) {
		t.Fatal("submit beyond limit accepted")
	}
	close(block)
}

func TestExpiry(t *testing.T) {
	p := NewPool(0, 50*time.Millisecond)
	defer p.Stop()
	// Ten tasks that all run at once, each on a worker of its own, then end.
	var started, wg sync.WaitGroup
	release := make(chan struct{})
	for i := 0; i < 10; i++ {
		started.Add(1)
		wg.Add(1)
		p.Submit(fnTask(func() { started.Done(); <-release; wg.Done() }))
	}
	started.Wait()
	if n := p.Workers(); n != 10 {
		t.Fatalf("%d workers run 10 blocked tasks", n)
	}
	close(release)
	wg.Wait()
	testkit.Until(3*time.Second, func() bool { return p.Workers() == 0 })
	if n := p.Workers(); n != 0 {
		t.Fatalf("workers after expiry = %d", n)
	}
}

// Stop ends the reaper at once, not at its next tick (up to an expiry period
// later), and a second Stop does nothing.
func TestStopEndsReaper(t *testing.T) {
	p := NewPool(0, time.Hour)
	p.Stop()
	select {
	case <-p.reaped:
	case <-time.After(time.Second):
		t.Fatal("the reaper outlived Stop")
	}
	p.Stop()
	if p.Submit(fnTask(func() {})) {
		t.Fatal("a stopped pool took a task")
	}
}

// A burst of tasks in which some block: every other task still runs, whichever
// worker took the blocking ones and in whatever order the workers ran.
func TestBurstWithBlockedTasks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		blocked func(i int) bool
	}{
		{name: "first", blocked: func(i int) bool { return i == 0 }},
		{name: "middle", blocked: func(i int) bool { return i == 50 }},
		{name: "every third", blocked: func(i int) bool { return i%3 == 0 }},
		{name: "all but the last", blocked: func(i int) bool { return i < 99 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPool(0, time.Second)
			defer p.Stop()
			warm(t, p, 100) // idle workers: the burst wakes one, not one per task
			release := make(chan struct{})
			var short sync.WaitGroup
			var all sync.WaitGroup
			for i := range 100 {
				all.Add(1)
				var task fnTask
				if tc.blocked(i) {
					task = func() { defer all.Done(); <-release }
				} else {
					short.Add(1)
					task = func() { defer all.Done(); short.Done() }
				}
				if !p.Submit(task) {
					t.Fatal("submit refused")
				}
			}
			done := make(chan struct{})
			go func() { short.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("a task waited behind a blocked one")
			}
			close(release)
			all.Wait()
		})
	}
}

// warm leaves n idle workers in p.
func warm(t *testing.T, p *Pool, n int) {
	t.Helper()
	var started, done sync.WaitGroup
	gate := make(chan struct{})
	for range n {
		started.Add(1)
		done.Add(1)
		if !p.Submit(fnTask(func() { started.Done(); <-gate; done.Done() })) {
			t.Fatal("submit refused")
		}
	}
	started.Wait()
	close(gate)
	done.Wait()
	var idle int
	if !testkit.Until(3*time.Second, func() bool {
		p.mu.Lock()
		idle = len(p.idle)
		p.mu.Unlock()
		return idle == n
	}) {
		t.Fatalf("%d idle workers, want %d", idle, n)
	}
}

// Stop lets the tasks it accepted run, and the workers exit afterwards.
func TestStopRunsAcceptedTasks(t *testing.T) {
	p := NewPool(0, time.Hour)
	var ran atomic.Int32
	block := make(chan struct{})
	for i := range 20 {
		p.Submit(fnTask(func() {
			if i == 0 {
				<-block
			}
			ran.Add(1)
		}))
	}
	p.Stop()
	close(block)
	testkit.Until(3*time.Second, func() bool { return ran.Load() == 20 && p.Workers() == 0 })
	if n, w := ran.Load(), p.Workers(); n != 20 || w != 0 {
		t.Fatalf("%d of 20 tasks ran, %d workers left", n, w)
	}
}

// LimitIdle: after a burst of 64 blocked tasks, at most the limit of workers
// park; the rest exit at once instead of waiting for the expiry. The pool still
// runs every task, and later ones reuse the parked workers.
func TestLimitIdle(t *testing.T) {
	for _, limit := range []int{0, 1, 8} {
		p := NewPool(0, time.Hour).LimitIdle(limit)
		release := make(chan struct{})
		var wg sync.WaitGroup
		for i := 0; i < 64; i++ {
			wg.Add(1)
			if !p.Submit(fnTask(func() { defer wg.Done(); <-release })) {
				t.Fatal("submit refused")
			}
		}
		close(release)
		wg.Wait()
		want := limit
		if limit == 0 {
			want = 64 // no bound: every worker parks until the expiry
		}
		testkit.Until(5*time.Second, func() bool { return p.Workers() == want && p.Idle() == want })
		if p.Workers() != want || p.Idle() != want {
			t.Fatalf("limit %d: %d workers, %d idle after the burst; want %d", limit, p.Workers(), p.Idle(), want)
		}
		done := make(chan struct{})
		p.Submit(fnTask(func() { close(done) }))
		<-done
		if limit > 0 && p.Workers() > limit {
			t.Fatalf("limit %d: a task after the burst started a worker beside %d idle", limit, limit)
		}
		p.Stop()
	}
}
