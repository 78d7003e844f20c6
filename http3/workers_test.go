package celerish3

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestWorkers: a burst of 300 blocking jobs runs at once (a worker each); when
// they end, at most maxIdleWorkers wait for more, and the next jobs reuse
// them rather than start goroutines; stop ends the idle ones.
func TestWorkers(t *testing.T) {
	before := runtime.NumGoroutine()
	w := newWorkers()
	release := make(chan struct{})
	var started, done sync.WaitGroup
	const burst = 300
	for i := 0; i < burst; i++ {
		started.Add(1)
		done.Add(1)
		w.run(func() { started.Done(); <-release; done.Done() })
	}
	started.Wait() // all 300 run at once
	close(release)
	done.Wait()
	waitFor(t, func() bool { return w.idleCount() == maxIdleWorkers }, "idle workers settle at the bound")
	// +1: the pool's reaper, which retires idle workers after workerExpiry.
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before+maxIdleWorkers+1 }, "workers past the bound end")
	n := runtime.NumGoroutine()
	for i := 0; i < 1000; i++ {
		ran := make(chan struct{})
		w.run(func() { close(ran) })
		<-ran
	}
	if got := runtime.NumGoroutine(); got > n+2 {
		t.Fatalf("%d goroutines after 1000 sequential jobs, %d before: workers not reused", got, n)
	}
	w.stop()
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before }, "stop ends the idle workers")
	ran := make(chan struct{})
	w.run(func() { close(ran) }) // after stop: runs, then its worker ends
	<-ran
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before }, "a worker started after stop ends")
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: no (%d goroutines)", what, runtime.NumGoroutine())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
