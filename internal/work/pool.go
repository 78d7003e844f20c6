// Package work runs handlers off the event loop on pooled goroutines.
//
// Submit appends a task to the pool's queue; workers take tasks from it in order.
// Two counts keep a blocked task from ever delaying another (capacity rule):
//
//   - every queued task has a worker that runs no task: idle (parked on its own
//     channel) or waking (signalled or just started, about to take a task), so
//     Submit starts a new worker when the queued tasks would outnumber them;
//   - while the queue is not empty, at least one worker is waking. A worker that
//     takes a task and leaves others queued wakes an idle one first (a chain), so
//     the rest never wait for the task it runs.
//
// A worker that finishes a task takes the next queued one before it parks. A burst
// of tasks from one event-loop callback (the streams of an HTTP/2 read) thus costs
// one or two goroutine wake-ups, not one per task: the first worker runs the tasks
// one after another, and the one it woke takes over as soon as a task blocks. Idle
// workers form a stack (the most recently used is woken first: its stack is warm);
// workers idle longer than the expiry exit, so the pool shrinks back after a burst.
// No goroutine is created per request in steady state.
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
	wake     chan bool // true: take queued tasks; false: exit (the reaper retired it)
	lastUsed int64     // the pool's coarse clock when the worker last parked
}

// Pool is a goroutine pool. The zero value is not usable; use NewPool.
type Pool struct {
	mu      sync.Mutex
	idle    []*worker // LIFO: the top is the most recently used; guarded by mu
	queue   []Task    // tasks no worker took yet, from head on; guarded by mu
	head    int
	waking  int // workers signalled or started that took no task yet; guarded by mu
	count   int // live workers; guarded by mu
	max     int
	maxIdle int // 0: no bound; set by LimitIdle before the first Submit
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

// LimitIdle bounds the workers that park waiting for a task to n (0: no bound,
// the default): a worker that finishes while n others are idle exits instead of
// parking, so that a burst leaves at most n goroutines, each with the stack it
// grew, instead of one per task of the burst until the expiry retires them. Call
// it before the first Submit; it returns p.
func (p *Pool) LimitIdle(n int) *Pool {
	p.maxIdle = n
	return p
}

// Submit runs t on a worker. It reports false only when the pool is stopped or at
// its limit (every worker runs a task); the caller then runs t itself or rejects
// the request.
func (p *Pool) Submit(t Task) bool {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		return false
	}
	queued, spare := len(p.queue)-p.head, len(p.idle)+p.waking
	if queued >= spare && p.max > 0 && p.count >= p.max {
		p.mu.Unlock()
		return false
	}
	p.queue = append(p.queue, t)
	switch {
	case queued >= spare:
		p.spawn() // the capacity rule: t needs a worker of its own
	case p.waking == 0:
		p.wakeIdle() // queued < spare, so one is idle
	}
	p.mu.Unlock()
	return true
}

// spawn starts a waking worker (p.mu held).
func (p *Pool) spawn() {
	p.count++
	p.waking++
	go p.loop(&worker{wake: make(chan bool, 1)})
}

// wakeIdle signals the most recently parked worker, or starts one when none is
// idle (p.mu held). The channel has room: a parked worker's is empty.
func (p *Pool) wakeIdle() {
	n := len(p.idle)
	if n == 0 {
		p.spawn()
		return
	}
	w := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	p.waking++
	w.wake <- true
}

// take removes the oldest queued task (p.mu held).
func (p *Pool) take() (Task, bool) {
	if p.head == len(p.queue) {
		return nil, false
	}
	t := p.queue[p.head]
	p.queue[p.head] = nil
	p.head++
	if p.head == len(p.queue) {
		p.queue, p.head = p.queue[:0], 0
	}
	return t, true
}

// loop is a worker: it starts waking, takes queued tasks until none is left, then
// parks until woken again or retired.
func (p *Pool) loop(w *worker) {
	p.mu.Lock()
	for {
		p.waking--
		for {
			t, ok := p.take()
			if !ok {
				break
			}
			if p.head < len(p.queue) && p.waking == 0 {
				p.wakeIdle() // the chain: the rest must not wait for t
			}
			p.mu.Unlock()
			t.Run()
			p.mu.Lock()
		}
		if p.stopped || p.maxIdle > 0 && len(p.idle) >= p.maxIdle {
			break // the queue is empty: no task needs this worker
		}
		w.lastUsed = p.clock.Load() // coarse: no clock read per task
		p.idle = append(p.idle, w)
		p.mu.Unlock()
		if !<-w.wake {
			p.mu.Lock()
			break
		}
		p.mu.Lock()
	}
	p.count--
	p.mu.Unlock()
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
		// expiry periods of idleness. Queued tasks count on the idle workers (the
		// capacity rule): none retires while there are any.
		for p.head == len(p.queue) && i < len(p.idle) && now-p.idle[i].lastUsed >= int64(p.expiry) {
			i++
		}
		expired = append(expired[:0], p.idle[:i]...)
		n := copy(p.idle, p.idle[i:])
		clear(p.idle[n:])
		p.idle = p.idle[:n]
		p.mu.Unlock()
		for _, w := range expired {
			w.wake <- false
		}
		clear(expired)
	}
}

// Stop retires idle workers and the reaper at once; busy workers exit when
// their task returns and no task is queued. Tasks already accepted still run.
// Stopping a stopped pool does nothing.
func (p *Pool) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	close(p.stop)
	for len(p.idle) > 0 {
		p.wakeIdle() // it takes what is queued, then exits
	}
}

// Stopped reports whether Stop was called.
func (p *Pool) Stopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// Idle returns the number of parked workers (for tests and metrics).
func (p *Pool) Idle() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// Workers returns the number of live workers (for tests and metrics).
func (p *Pool) Workers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count
}
