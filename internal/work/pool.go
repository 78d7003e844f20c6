// Package work runs handlers off the event loop on pooled goroutines.
//
// A Pool keeps a stack of idle workers, each parked on its own channel. Submit hands a
// task to the most recently idle worker (its stack is warm) or starts a new worker when
// none is idle, so a blocked handler never delays another request: there is always a
// goroutine for the next one. Workers idle longer than the expiry exit, so the pool
// shrinks back after a burst. No goroutine is created per request in steady state.
package work

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Task is a unit of work (httpmsg.Task, which a std engine connection also runs
// itself). It is a value with a method rather than a closure so that submitting
// does not allocate.
type Task = httpmsg.Task

type worker struct {
	ch       chan Task
	lastUsed int64 // the pool's coarse clock when the worker last finished a task
}

// Pool is a goroutine pool. The zero value is not usable; use NewPool.
type Pool struct {
	mu      sync.Mutex
	idle    []*worker // LIFO: the top is the most recently used
	count   int       // live workers
	max     int
	expiry  time.Duration
	stopped bool
	clock   atomic.Int64 // unix ns, refreshed by the reaper every expiry period

	stop   chan struct{} // closed by Stop: the reaper returns
	reaped chan struct{} // closed when the reaper returned
}

// NewPool returns a pool that keeps at most max live workers (0: unlimited) and
// retires workers idle for longer than expiry.
func NewPool(max int, expiry time.Duration) *Pool {
	if expiry <= 0 {
		expiry = 10 * time.Second
	}
	p := &Pool{max: max, expiry: expiry, stop: make(chan struct{}), reaped: make(chan struct{})}
	p.clock.Store(time.Now().UnixNano())
	go p.reaper()
	return p
}

// Submit runs t on a worker. It reports false only when the pool is stopped or at
// its limit; the caller then runs t itself or rejects the request.
func (p *Pool) Submit(t Task) bool {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return false
	}
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.ch <- t
		return true
	}
	if p.max > 0 && p.count >= p.max {
		p.mu.Unlock()
		return false
	}
	p.count++
	p.mu.Unlock()
	w := &worker{ch: make(chan Task, 1)}
	w.ch <- t
	go p.loop(w)
	return true
}

func (p *Pool) loop(w *worker) {
	for t := range w.ch {
		if t == nil {
			break
		}
		t.Run()
		if !p.release(w) {
			break
		}
	}
	p.mu.Lock()
	p.count--
	p.mu.Unlock()
}

// release parks w as idle. It reports false when the worker should exit.
func (p *Pool) release(w *worker) bool {
	w.lastUsed = p.clock.Load() // coarse: no clock read per task
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return false
	}
	p.idle = append(p.idle, w)
	p.mu.Unlock()
	return true
}

// reaper retires workers that stayed idle longer than the expiry. The oldest idle
// workers sit at the bottom of the stack.
func (p *Pool) reaper() {
	defer close(p.reaped)
	t := time.NewTicker(p.expiry)
	defer t.Stop()
	var expired []*worker
	for {
		select {
		case <-t.C:
		case <-p.stop:
			return
		}
		now := time.Now().UnixNano()
		p.clock.Store(now)
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return
		}
		i := 0
		// lastUsed lags by up to one tick: a worker retires after one to two
		// expiry periods of idleness.
		for i < len(p.idle) && now-p.idle[i].lastUsed >= int64(p.expiry) {
			i++
		}
		expired = append(expired[:0], p.idle[:i]...)
		n := copy(p.idle, p.idle[i:])
		clear(p.idle[n:])
		p.idle = p.idle[:n]
		p.mu.Unlock()
		for _, w := range expired {
			w.ch <- nil
		}
		clear(expired)
	}
}

// Stop retires idle workers and the reaper at once; busy workers exit when
// their task returns. Stopping a stopped pool does nothing.
func (p *Pool) Stop() {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return
	}
	p.stopped = true
	idle := p.idle
	p.idle = nil
	close(p.stop)
	p.mu.Unlock()
	for _, w := range idle {
		w.ch <- nil
	}
}

// Stopped reports whether Stop was called.
func (p *Pool) Stopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// Workers returns the number of live workers (for tests and metrics).
func (p *Pool) Workers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}
