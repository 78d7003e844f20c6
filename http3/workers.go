package celerish3

import (
	"time"

	"github.com/celeris-dev/celeris/transport"
)

// maxIdleWorkers bounds the goroutines that wait for a request stream: each
// keeps a stack grown by earlier requests (tens of KiB), so the bound is that
// many stacks at most, held while the server runs.
const maxIdleWorkers = 128

// workerExpiry retires a worker that waited this long (one to two periods) for
// a request stream.
const workerExpiry = 10 * time.Second

// workers runs request streams on goroutines that outlive one request: the
// server's worker pool (transport.WorkerPool), with no bound on the busy workers and
// at most maxIdleWorkers idle ones. A new goroutine starts with a small stack
// and grows it on every request (the first read from a quic-go stream is deep):
// the copies cost about a sixth of the server's CPU time per request in
// BenchmarkGET's profile, so a worker that finished a request takes the next
// one instead. There is a worker for every request being served, so
// MaxConcurrentStreams per connection bounds them as it bounded a goroutine per
// request.
type workers struct {
	pool *transport.WorkerPool
}

func newWorkers() *workers {
	return &workers{pool: transport.NewWorkerPool(0, workerExpiry).LimitIdle(maxIdleWorkers)}
}

// job is a request stream's function as a transport.Task (a func value converts to
// the interface without allocating).
type job func()

func (j job) Run() { j() }

// run runs f on an idle worker, or on a new one; after stop, on a goroutine of
// its own.
func (w *workers) run(f func()) {
	if !w.pool.Submit(job(f)) {
		go f()
	}
}

// stop ends the idle workers; busy ones end after their request.
func (w *workers) stop() { w.pool.Stop() }

// idleCount is the number of workers waiting for a request stream.
func (w *workers) idleCount() int { return w.pool.Idle() }
