//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import (
	"context"
	"net"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"

	"github.com/celeris-dev/celeris/internal/bufpool"
	"github.com/celeris-dev/celeris/internal/conncore"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// conn is one connection's engine-side state: gnet's connection, the engine's
// input and output buffers, and the per-connection rules (conncore.Core).
type conn struct {
	gc     gnet.Conn // owned by the event loop
	eng    *Engine
	loop   *loopState
	core   conncore.Core // owned by the event loop: protocol, deadlines, close, drain, hijack
	out    []byte        // output batch of the current callback, owned by the event loop
	remote net.Addr

	woken      atomic.Bool  // a wake-up is pending (coalescing)
	pendingOut atomic.Bool  // output is still queued in gnet after the last callback
	drain      atomic.Bool  // shutdown asked this connection to finish (the loop tells its Core)
	closed     atomic.Bool  // OnClose ran
	deadline   atomic.Int64 // unix ns after which the ticker closes the conn; 0: none

	paused      bool // owned by the event loop: reading is paused, the fd out of the poller (pause.go)
	pausedWrite bool // owned by the event loop: paused, the fd in the poller for writing only
	lingering   bool // owned by the event loop: output shut down, input dropped until close (linger.go)

	in    []byte // owned by the event loop: input taken from gnet, unconsumed from inOff (input.go)
	inOff int

	det atomic.Pointer[detached] // set by the loop once gnet closed a half-closed conn (detach.go)

	dw drainWatch // owned by the event loop (drainwatch.go)
}

// Write appends to the output batch (httpmsg.Conn).
func (c *conn) Write(b []byte) { c.out = append(c.out, b...) }

// WriteOwned queues b (httpmsg.OwnedWriter), keeping b itself while the batch is
// empty (httpmsg.AppendOwned).
func (c *conn) WriteOwned(b []byte) []byte {
	var spare []byte
	c.out, spare = httpmsg.AppendOwned(c.out, b)
	return spare
}

// Wake schedules OnWake on the loop (httpmsg.Conn). Safe from any goroutine.
// Wake-ups coalesce twice: per connection (woken) and per event loop (one gnet
// task drains every connection that asked since the last one ran).
func (c *conn) Wake() {
	if c.woken.CompareAndSwap(false, true) {
		c.loop.add(c)
	}
}

// Close closes after the output batch is flushed (httpmsg.Conn). Loop only.
func (c *conn) Close() { c.core.Close() }

// RemoteAddr is the peer address (httpmsg.Conn).
func (c *conn) RemoteAddr() net.Addr { return c.remote }

func (c *conn) requestDrain() {
	if c.drain.CompareAndSwap(false, true) {
		c.Wake()
	}
}

// wake serves a pending wake-up (loop only): the Core runs the protocol's
// OnWake, switches protocol, and tells it of a drain once.
func (c *conn) wake() {
	c.woken.Store(false)
	if c.drain.Load() {
		c.core.AskDrain()
	}
	c.core.Wake()
}

// onTraffic is the body of gnet's OnTraffic for this connection.
func (c *conn) onTraffic() gnet.Action {
	if c.lingering {
		c.linger() // linger.go: until the client closes or the deadline passes
		return gnet.None
	}
	if c.woken.Load() {
		c.wake()
	}
	now := c.eng.now.Load()
	in := -1 // c.buffered() after the protocol read, once known: unchanged below
	if !c.core.Closing() {
		c.feed(now)
		in = c.buffered()
		if !c.core.Closing() {
			c.takeInput() // gnet's ring buffer stays empty (input.go)
		}
	}
	if c.core.IsHijacked() {
		// Hijack took the output and the input; gnet closes its copy of the
		// descriptor (never lingering: shutdown would act on the hijacker's socket).
		c.deadline.Store(0)
		return gnet.Close
	}
	drained := -1
	if c.dw.last > 0 {
		drained = c.dw.last - c.gc.OutboundBuffered() // before this callback's write
	}
	if len(c.out) > 0 {
		if c.paused { // resumeRead's own first test, here to save the call
			c.resumeRead() // gnet's write changes the fd's poller interest: it must be as gnet left it
		}
		c.writeOut()
		if cap(c.out) < bufpool.MinSize { // releaseOut's common case, here to save the call
			c.out = c.out[:0]
		} else {
			c.releaseOut()
		}
	}
	outbound := c.gc.OutboundBuffered()
	// gnet reports no drain of its output: the drain watch, not Flushed's answer,
	// wakes a protocol waiting for it (drainwatch.go).
	c.core.Flushed(outbound)
	if outbound > 0 || drained >= 0 {
		c.watchDrain(drained, outbound)
	}
	if c.core.Closing() {
		// Close once gnet wrote everything: closing at once would drop what the
		// socket did not take yet (gnet tries its buffer only once). The ticker
		// wakes the connection while output is pending; the write deadline bounds
		// the wait for a client that never reads.
		if outbound == 0 {
			// The client may still be sending: linger (linger.go).
			if c.core.Linger() && c.startLinger() {
				return gnet.None
			}
			c.deadline.Store(0)
			return gnet.Close
		}
		c.resumeRead()
		c.pendingOut.Store(true)
		c.deadline.Store(c.core.Deadline(now, 0, outbound))
		return gnet.None
	}
	c.pendingOut.Store(outbound > 0)
	if in < 0 {
		in = c.buffered()
	}
	c.applyBackpressure(in)
	c.deadline.Store(c.core.Deadline(now, in, outbound))
	return gnet.None
}

// releaseOut empties the output batch once written, keeping its buffer for the
// next batch unless it is large: above 1 MiB it is dropped (do not pin a large
// buffer to an idle connection), and above bufpool.MinSize a protocol that says
// so (httpmsg.OutputPooler: WebSocket, whose large messages come and go) gets it pooled,
// so that a steady stream of large messages neither allocates nor keeps a large
// buffer per connection.
func (c *conn) releaseOut() {
	switch n := cap(c.out); {
	case n > 1<<20:
		c.out = nil
	case n >= bufpool.MinSize:
		if _, ok := c.core.Proto().(httpmsg.OutputPooler); ok {
			bufpool.Put(c.out)
			c.out = nil
			return
		}
		c.out = c.out[:0]
	default:
		c.out = c.out[:0]
	}
}

// OutboundBuffered is how many written bytes gnet still holds (event loop only).
// HTTP/2 holds DATA back while it is large, so that a peer that never reads cannot
// grow it without bound.
func (c *conn) OutboundBuffered() int {
	if d := c.det.Load(); d != nil {
		return int(d.pending.Load())
	}
	return c.gc.OutboundBuffered()
}

// writeOut writes the callback's output batch. When gnet holds nothing unsent, the
// batch goes to the socket directly (rawWrite) and gnet gets only what the socket
// did not take, which it buffers and sends when the socket is writable, as it does
// with any partial write; otherwise the batch queues behind gnet's output. Never
// once gnet closed the connection (OnClose ran before it closed the descriptor):
// its number may already belong to another connection.
func (c *conn) writeOut() {
	if c.gc.OutboundBuffered() == 0 && !c.closed.Load() {
		if n, ok := rawWrite(c.gc.Fd(), c.out); ok {
			if n < len(c.out) {
				_, _ = c.gc.Write(c.out[n:])
			}
			return
		}
	}
	_, _ = c.gc.Write(c.out)
}

// feed presents everything buffered to the Core, a window at a time, until the
// protocol leaves some of a window or closes.
func (c *conn) feed(now int64) {
	for !c.core.Closing() {
		buf, fromGnet := c.peek()
		if len(buf) == 0 {
			return
		}
		n := c.core.Feed(buf, now)
		c.consume(n, fromGnet)
		if n < len(buf) || n == 0 {
			return
		}
		// The protocol took the whole window and more is buffered: go on.
	}
}

// applyBackpressure pauses reading while the protocol leaves more than the
// engine's limit unconsumed, and resumes once it consumed enough. in is
// c.buffered(), which the caller knows (taking gnet's input into the engine's
// buffer moves bytes, it does not change their count).
func (c *conn) applyBackpressure(in int) {
	limit := c.eng.cfg.MaxBufferedInput
	switch {
	case !c.paused && in > limit:
		c.pauseRead()
	case c.paused && in <= limit/2:
		c.resumeRead()
	}
}

// loopState is one event loop's queue of connections woken by handler goroutines.
type loopState struct {
	el      gnet.EventLoop
	mu      sync.Mutex
	ready   []*conn // guarded by mu
	spare   []*conn // guarded by mu
	pending bool    // guarded by mu: a drain task is queued on the loop

	connMu sync.Mutex
	conns  map[*conn]struct{} // guarded by connMu: the loop's open connections (detached ones included)

	calls       uint32   // owned by the loop: callbacks since the loop last yielded
	freeIn      [][]byte // owned by the loop: empty input buffers for reuse (input.go)
	freeInBytes int      // owned by the loop: their capacity in all
}

// keep lists c among the loop's open connections.
func (ls *loopState) keep(c *conn) {
	ls.connMu.Lock()
	ls.conns[c] = struct{}{}
	ls.connMu.Unlock()
}

// forget removes c once it is closed (gnet closed it, or its detached writer
// finished).
func (ls *loopState) forget(c *conn) {
	ls.connMu.Lock()
	delete(ls.conns, c)
	ls.connMu.Unlock()
}

// yieldEvery is how many callbacks a busy loop runs between two runtime.Gosched.
const yieldEvery = 128

// yieldSometimes yields the loop's goroutine every yieldEvery callbacks. A loop
// that never blocks keeps one scheduling tick for more than 10 ms, and sysmon then
// preempts it, or takes its P away in the middle of a read or write, after which
// sysmon polls every 20 µs for a millisecond. Yielding now and then avoids those
// thread switches (measured in docs/BENCHMARKS.md) and lets goroutines waiting for
// the P (workers, when GOMAXPROCS is 1) run.
func (ls *loopState) yieldSometimes() {
	ls.calls++
	if ls.calls%yieldEvery == 0 {
		runtime.Gosched()
	}
}

// add queues c and, unless a drain is already queued, queues one (any goroutine).
func (ls *loopState) add(c *conn) {
	ls.mu.Lock()
	ls.ready = append(ls.ready, c)
	trigger := !ls.pending
	ls.pending = true
	ls.mu.Unlock()
	if trigger {
		// Fails only while the engine shuts down, when connections close anyway.
		_ = ls.el.Execute(context.Background(), ls)
	}
}

// Run drains the queue on the event loop (gnet.Runnable).
func (ls *loopState) Run(context.Context) error {
	ls.mu.Lock()
	list := ls.ready
	ls.ready, ls.spare = ls.spare[:0], nil
	ls.pending = false
	ls.mu.Unlock()
	for i, c := range list {
		list[i] = nil
		if c.closed.Load() || !c.woken.Load() {
			continue // closed, or a read event already ran its OnWake
		}
		if d := c.det.Load(); d != nil {
			c.onDetached(d)
			continue
		}
		if c.onTraffic() == gnet.Close {
			_ = ls.el.Close(c.gc)
		}
	}
	ls.mu.Lock()
	if cap(list) <= 4096 {
		ls.spare = list[:0]
	}
	ls.mu.Unlock()
	return nil
}
