package work

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		p.Submit(fnTask(func() { time.Sleep(10 * time.Millisecond); wg.Done() }))
	}
	wg.Wait()
	deadline := time.Now().Add(3 * time.Second)
	for p.Workers() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
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
