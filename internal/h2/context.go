package h2

import (
	"context"
	"sync"
	"time"
)

// streamCtx is the Request.Ctx of a stream: cancelled when the stream is reset
// (by either side) or the connection goes away, so a handler can stop work nobody
// will read. It lives inside the stream and is recycled with it, so it is valid
// only until Serve returns (as every Request field). Its Done channel is made on
// first use: a handler that never asks costs nothing.
type streamCtx struct {
	mu   sync.Mutex
	done chan struct{}
	err  error
}

var closedChan = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

func (x *streamCtx) Deadline() (time.Time, bool) { return time.Time{}, false }

func (x *streamCtx) Done() <-chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.done == nil {
		if x.err != nil {
			return closedChan
		}
		x.done = make(chan struct{})
	}
	return x.done
}

func (x *streamCtx) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

func (x *streamCtx) Value(any) any { return nil }

func (x *streamCtx) cancel() {
	x.mu.Lock()
	if x.err == nil {
		x.err = context.Canceled
		if x.done != nil {
			close(x.done)
		}
	}
	x.mu.Unlock()
}

// reset readies the context for the stream's next request (loop, no handler).
func (x *streamCtx) reset() {
	x.mu.Lock()
	x.done, x.err = nil, nil
	x.mu.Unlock()
}
