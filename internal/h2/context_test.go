package h2

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// requestContext returns the request's context as the framework's c.Context()
// finds it: the ResponseWriter's (httpmsg.ContextWriter).
func requestContext(_ *httpmsg.Request, w httpmsg.ResponseWriter) context.Context {
	return w.(httpmsg.ContextWriter).Context()
}

// TestContextOutlivesRequest: contexts derived from the request context
// (WithTimeout, WithCancel, AfterFunc) and the request context itself stay valid
// after Serve returns, while the stream is recycled for later requests on the
// same connection. A request context kept inside the recycled stream would be
// reset for the next request while the goroutine context.WithTimeout starts for
// it still calls its Done and Err (a data race under -race, and a parent Err of
// nil after its Done closed). Run with -race.
func TestContextOutlivesRequest(t *testing.T) {
	for _, inline := range []bool{false, true} {
		t.Run(map[bool]string{true: "inline", false: "worker"}[inline], func(t *testing.T) {
			const requests = 300
			var wg sync.WaitGroup
			errs := make(chan error, 4*requests)
			var mu sync.Mutex
			streams := map[httpmsg.ResponseWriter]bool{} // the stream is the writer
			h := handlerFunc{
				inline: func(*httpmsg.Request) bool { return inline },
				serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
					mu.Lock()
					streams[w] = true
					mu.Unlock()
					ctx := requestContext(r, w)
					done := ctx.Done()
					tctx, tcancel := context.WithTimeout(ctx, time.Hour)
					cctx, ccancel := context.WithCancel(ctx)
					ran := make(chan struct{})
					stop := context.AfterFunc(ctx, func() { close(ran) })
					if ctx.Err() != nil || tctx.Err() != nil || cctx.Err() != nil {
						errs <- errors.New("context cancelled during Serve")
					}
					wg.Add(1)
					// The children outlive the request: they are still in use, and
					// uncancelled by their owner, while later requests reuse the
					// stream.
					go func() {
						defer wg.Done()
						defer tcancel()
						defer ccancel()
						timeout := time.After(5 * time.Second)
						for _, c := range []context.Context{ctx, tctx, cctx} {
							select {
							case <-c.Done():
							case <-timeout:
								errs <- errors.New("context not cancelled after Serve returned")
								return
							}
						}
						select {
						case <-ran:
						case <-timeout:
							errs <- errors.New("AfterFunc did not run")
							return
						}
						if stop() {
							errs <- errors.New("AfterFunc stopped after it ran")
						}
						// Keep reading while the stream serves other requests.
						for range 50 {
							if ctx.Done() != done {
								errs <- errors.New("Done channel changed")
								return
							}
							if ctx.Err() != context.Canceled || tctx.Err() != context.Canceled ||
								cctx.Err() != context.Canceled || context.Cause(tctx) != context.Canceled {
								errs <- errors.New("Err changed after cancellation")
								return
							}
							testkit.Slow(50 * time.Microsecond) // a sleep: polls the context while the stream is reset
						}
					}()
					_ = w.WriteResponse(200, nil, []byte("ok"))
				},
			}
			hs := newHarness(t, h, nil)
			hs.handshake()
			block := hs.get("/")
			for i := range requests {
				id := uint32(2*i + 1)
				hs.send(frame.AppendHeaders(nil, id, true, true, block))
				if r := hs.response(id); r.status != "200" {
					t.Fatalf("%d: %+v", id, r)
				}
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			if n := len(streams); n > requests/2 {
				t.Fatalf("%d streams for %d requests: streams not recycled", n, requests)
			}
		})
	}
}

// TestContextCancelledByClientReset: RST_STREAM from the client cancels the
// request context while the loop processes the frame, and a handler waiting on a
// context derived from it observes that within 100 ms. The latency bound is met
// by the best of three tries, so that one scheduling hiccup on a loaded machine
// does not fail it.
func TestContextCancelledByClientReset(t *testing.T) {
	type start struct {
		ctx      context.Context
		observed chan time.Time
	}
	starts := make(chan start, 1)
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		ctx := requestContext(r, w)
		child, cancel := context.WithTimeout(ctx, time.Hour)
		defer cancel()
		observed := make(chan time.Time, 1)
		starts <- start{ctx: ctx, observed: observed}
		select {
		case <-child.Done():
			observed <- time.Now()
		case <-time.After(5 * time.Second):
			close(observed)
		}
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	var worst time.Duration
	for try := range 3 {
		id := uint32(2*try + 1)
		hs.send(frame.AppendHeaders(nil, id, true, true, hs.get("/")))
		st := <-starts
		sent := time.Now()
		hs.send(frame.AppendRSTStream(nil, id, frame.ErrCodeCancel))
		// Synchronous: cancelled by the time the loop is done with the frame.
		if err := st.ctx.Err(); err != context.Canceled {
			t.Fatalf("context after RST_STREAM: %v", err)
		}
		select {
		case <-st.ctx.Done():
		default:
			t.Fatal("Done not closed after RST_STREAM")
		}
		at, ok := <-st.observed
		if !ok {
			t.Fatal("derived context not cancelled by RST_STREAM")
		}
		d := at.Sub(sent)
		if d <= 100*time.Millisecond {
			return
		}
		worst = max(worst, d)
	}
	t.Fatalf("cancellation observed after %v", worst)
}

// TestContextCancelledOnClose: the connection's end cancels the context of a
// running handler.
func TestContextCancelledOnClose(t *testing.T) {
	started := make(chan struct{})
	cancelled := make(chan error, 1)
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		ctx := requestContext(r, w)
		close(started)
		select {
		case <-ctx.Done():
			cancelled <- ctx.Err()
		case <-time.After(5 * time.Second):
			cancelled <- nil
		}
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
	<-started
	hs.c.OnClose(nil)
	if err := <-cancelled; err != context.Canceled {
		t.Fatalf("context after close: %v", err)
	}
}

// TestContextAfterReset: a context first asked for after the stream was reset
// is born cancelled; one asked twice is the same context.
func TestContextAfterReset(t *testing.T) {
	got := make(chan error, 1)
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		_, _ = io.ReadAll(r.BodyReader) // fails once the client resets
		ctx := requestContext(r, w)
		switch {
		case ctx != requestContext(r, w):
			got <- errors.New("two contexts for one request")
		case ctx.Err() != context.Canceled:
			got <- errors.New("context of a reset stream not cancelled")
		default:
			select {
			case <-ctx.Done():
				got <- nil
			default:
				got <- errors.New("Done of a cancelled context not closed")
			}
		}
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, false, true, hs.post("/")))
	hs.send(frame.AppendRSTStream(nil, 1, frame.ErrCodeCancel))
	if err := <-got; err != nil {
		t.Fatal(err)
	}
}

// TestContextAfterFuncStop: stopping an AfterFunc registration before the
// request ends keeps the function from running.
func TestContextAfterFuncStop(t *testing.T) {
	ran := make(chan struct{}, 1)
	stopped := make(chan bool, 1)
	h := handlerFunc{serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		stop := context.AfterFunc(requestContext(r, w), func() { ran <- struct{}{} })
		stopped <- stop()
		_ = w.WriteResponse(204, nil, nil)
	}}
	hs := newHarness(t, h, nil)
	hs.handshake()
	hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/")))
	hs.response(1)
	if !<-stopped {
		t.Fatal("stop reported false before cancellation")
	}
	select {
	case <-ran:
		t.Fatal("stopped AfterFunc ran")
	case <-time.After(50 * time.Millisecond):
	}
}
