package celerish3

import "sync"

// maxIdleWorkers bounds the goroutines that wait for a request stream: each
// keeps a stack grown by earlier requests (tens of KiB), so the bound is that
// many stacks at most, held while the server runs.
const maxIdleWorkers = 128

// workers runs request streams on goroutines that outlive one request. A new
// goroutine starts with a small stack and grows it on every request (the
// first read from a quic-go stream is deep): the copies cost about a sixth of
// the server's CPU time per request in BenchmarkGET's profile. A worker that
// finished a request waits for the next one instead, up to maxIdleWorkers of
// them; past that, or after stop, it ends. There is a worker for every
// request being served, so MaxConcurrentStreams per connection bounds them
// as it bounded the goroutine per request.
type workers struct {
	jobs chan func() // unbuffered: a send succeeds only when a worker waits

	mu      sync.Mutex
	idle    int           // workers waiting on jobs
	quit    chan struct{} // closed by stop: idle workers end
	stopped bool
}

func newWorkers() *workers {
	return &workers{jobs: make(chan func()), quit: make(chan struct{})}
}

// run runs f on an idle worker, or on a new one.
func (w *workers) run(f func()) {
	select {
	case w.jobs <- f:
	default:
		go w.work(f)
	}
}

// work runs f, then the jobs it is handed while it may stay idle.
func (w *workers) work(f func()) {
	for {
		f()
		w.mu.Lock()
		if w.stopped || w.idle >= maxIdleWorkers {
			w.mu.Unlock()
			return
		}
		w.idle++
		w.mu.Unlock()
		select {
		case f = <-w.jobs:
			w.mu.Lock()
			w.idle--
			w.mu.Unlock()
		case <-w.quit:
			return
		}
	}
}

// stop ends the idle workers; busy ones end after their request.
func (w *workers) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stopped {
		w.stopped = true
		close(w.quit)
	}
}

// idleCount is the number of workers waiting for a request stream.
func (w *workers) idleCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.idle
}
