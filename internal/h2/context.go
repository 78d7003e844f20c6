package h2

import (
	"context"
	"sync"
	"time"
)

// The request context of a stream is created on the first call of the stream's
// Context method (the ResponseWriter's; the framework's c.Context() asks it, as
// for HTTP/1.1; httpmsg.ContextWriter), never before: a handler that does not
// ask costs nothing. Each request gets its own reqCtx, which is never
// recycled: user code may keep it, and contexts derived from it, after Serve
// returns (context.WithTimeout(ctx, d) keeps its parent for life), so it must not
// be reset for the stream's next request. The stream only holds a pointer to it
// (guarded by Conn.mu), cancels it, and drops it when the stream is recycled: a
// context kept inside the recycled stream would be reset for the next request
// while a goroutine started for it by context.WithTimeout (a foreign parent
// without AfterFunc) could still read it, a data race and a wrong Err.
//
// It is cancelled when the stream closes (reset by either side, or completed),
// when the connection ends, and when Serve returns, whichever comes first (as
// net/http's HTTP/2 server does).

// Context returns the request's context, creating it on first use. It is
// cancelled when the stream closes, the connection ends or Serve returns. Call
// it from the handler, before Serve returns; the context itself stays valid for
// as long as anyone holds it.
func (s *stream) Context() context.Context {
	c := s.c
	c.mu.Lock()
	x := s.ctx.Load()
	if x == nil {
		x = &reqCtx{}
		if s.sh.dead || s.sh.done {
			x.err = context.Canceled
		}
		s.ctx.Store(x)
	}
	c.mu.Unlock()
	return x
}

// reqCtx is a request context (see stream.Context). Its fields are guarded by mu;
// the channel and the error, once set, never change.
type reqCtx struct {
	mu    sync.Mutex
	done  chan struct{} // made on first Done; closedChan when first asked after cancel
	err   error         // context.Canceled once cancelled
	funcs []*afterFunc  // registered by AfterFunc, run at cancel
}

// afterFunc is one AfterFunc registration; f is nil once it ran or was stopped.
type afterFunc struct{ f func() }

var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// Deadline implements context.Context: a request has no deadline of its own.
func (x *reqCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done implements context.Context. The channel is made on first use and is the
// same for every call.
func (x *reqCtx) Done() <-chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done == nil {
		if x.err != nil {
			x.done = closedChan
		} else {
			x.done = make(chan struct{})
		}
	}
	return x.done
}

// Err implements context.Context.
func (x *reqCtx) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// Value implements context.Context: a request context carries no values.
func (x *reqCtx) Value(any) any { return nil }

func (x *reqCtx) String() string { return "h2.requestContext" }

// AfterFunc arranges for f to run in its own goroutine once x is cancelled (at
// once if it already is); stop unregisters f and reports whether it did so before
// f was started. The context package uses it (see context.AfterFunc): a context
// derived from x with WithCancel, WithTimeout or WithDeadline registers its
// cancellation here instead of starting a goroutine that waits on Done.
func (x *reqCtx) AfterFunc(f func()) (stop func() bool) {
	x.mu.Lock()
	if x.err != nil {
		x.mu.Unlock()
		// Not synchronously: the context package calls AfterFunc holding the
		// child's lock, which f takes.
		go f()
		return func() bool { return false }
	}
	a := &afterFunc{f: f}
	x.funcs = append(x.funcs, a)
	x.mu.Unlock()
	return func() bool { return x.stop(a) }
}

func (x *reqCtx) stop(a *afterFunc) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if a.f == nil {
		return false
	}
	a.f = nil
	for i, b := range x.funcs {
		if b == a {
			last := len(x.funcs) - 1
			x.funcs[i] = x.funcs[last]
			x.funcs[last] = nil
			x.funcs = x.funcs[:last]
			break
		}
	}
	return true
}

// cancel cancels x (once; later calls do nothing). x may be nil: a context
// nobody asked for needs no cancelling. It takes x.mu only (Conn.mu may be held;
// x.mu is never held while taking Conn.mu) and starts the registered functions
// in their own goroutines.
func (x *reqCtx) cancel() {
	if x == nil {
		return
	}
	x.mu.Lock()
	if x.err != nil {
		x.mu.Unlock()
		return
	}
	x.err = context.Canceled
	if x.done != nil {
		close(x.done)
	}
	funcs := x.funcs
	x.funcs = nil
	for _, a := range funcs {
		f := a.f
		a.f = nil
		go f()
	}
	x.mu.Unlock()
}
