package stdengine

import (
	"sync"
	"sync/atomic"
	"time"
)

// writer is a connection's writer goroutine and its queue: the owner pushes the
// output the socket did not take at once (conn.send: the owner writes inline,
// without blocking, only while the writer is idle), the writer writes the batches
// in order, blocking as long as the peer needs. The goroutine
// runs only while there is something to write: push starts it, and it returns
// once the queue is empty, so an idle connection (most of them, with keep-alive
// and HTTP/2) holds one goroutine, its owner, not two. What is queued
// and not yet written (pending) is what the protocols see as the engine's unsent
// output (OutboundBuffered, AfterFlush), as gnet's outbound buffer on the other
// engine. Unlike gnet, the writer knows when output drains: it wakes the owner as
// soon as pending falls to the level the protocol waits for (DrainLevel), so no
// drain estimate or ticker is needed.
type writer struct {
	pending  atomic.Int64 // bytes queued and not yet written
	level    atomic.Int64 // wake the owner once pending <= level; -1: no one waits
	lastDone atomic.Int64 // when a write last completed, monoNow (idle clock)
	failed   atomic.Bool  // a write failed: the peer is gone, the socket is closed

	// running: the writer goroutine runs. Changed under mu only (push sets it,
	// the goroutine clears it once the queue is empty), read without it by the
	// owner (idle), the only goroutine that sets it.
	running atomic.Bool

	mu     sync.Mutex
	queue  []item   // guarded by mu: batches to write, owned by the writer
	spare  []item   // guarded by mu: the queue's other backing array
	free   [][]byte // guarded by mu: written buffers, handed back to the owner
	ending bool     // guarded by mu: return once the queue is written
	closed bool     // guarded by mu: done is closed
	c      *conn    // the connection written to
	done   chan struct{}
}

// maxFreeBuf bounds a buffer the writer hands back for reuse.
const maxFreeBuf = 1 << 20

// writeSlice is the most written under one write deadline.
const writeSlice = 256 << 10

func (w *writer) init(c *conn) {
	w.c = c
	w.level.Store(-1)
	w.done = make(chan struct{})
}

// item is a queued output batch: bytes for the socket, or (plain, over TLS)
// plaintext the writer encrypts as it writes it, through the tls.Conn.
type item struct {
	b     []byte
	off   int // b[off:] is to be written: the owner wrote b[:off] itself
	plain bool
}

// push queues b, which the writer owns from then on, and returns an empty buffer
// for the owner's next batch (a written one when there is one). Owner only.
func (w *writer) push(b []byte, plain bool) []byte {
	return w.pushFrom(b, 0, plain)
}

// pushFrom is push of b[off:] (the owner wrote b[:off]); the writer recycles b
// whole, so that the buffer keeps its capacity.
func (w *writer) pushFrom(b []byte, off int, plain bool) []byte {
	w.pending.Add(int64(len(b) - off))
	w.mu.Lock()
	w.queue = append(w.queue, item{b, off, plain})
	var next []byte
	if n := len(w.free); n > 0 {
		next = w.free[n-1]
		w.free[n-1] = nil
		w.free = w.free[:n-1]
	}
	if !w.running.Load() {
		w.running.Store(true)
		go w.run(w.c)
	}
	w.mu.Unlock()
	return next[:0]
}

// idle reports whether the writer goroutine is not running, so nothing is queued
// (owner only: only the owner starts it). No lock: a writer seen idle wrote
// everything before it cleared running, and only the owner starts it again.
func (w *writer) idle() bool { return !w.running.Load() }

// end makes done close once the queue is written (owner, at close).
func (w *writer) end() {
	w.mu.Lock()
	w.ending = true
	if !w.running.Load() && !w.closed {
		w.closed = true
		close(w.done)
	}
	w.mu.Unlock()
}

// run is the writer goroutine of c.
func (w *writer) run(c *conn) {
	idle := c.eng.cfg.IdleTimeout
	for {
		w.mu.Lock()
		if len(w.queue) == 0 {
			// Nothing more to write: the goroutine ends (push starts another).
			w.running.Store(false)
			if w.ending && !w.closed {
				w.closed = true
				close(w.done)
			}
			w.mu.Unlock()
			return
		}
		batch := w.queue
		w.queue, w.spare = w.spare[:0], nil
		w.mu.Unlock()
		for _, bt := range batch {
			b := bt.b[bt.off:]
			// Plaintext goes through crypto/tls, whose records tlsIO passes
			// straight to the socket (the owner collects only while the
			// writer is idle).
			out := c.raw
			if bt.plain {
				out = c.nc
			}
			for off := 0; off < len(b); {
				// Slices: each must make progress within the idle timeout (a
				// client that stops reading is closed, as on gnet), and pending
				// falls as bytes leave (streaming back-pressure).
				n := min(len(b)-off, writeSlice)
				if !w.failed.Load() {
					// To the socket: over TLS the batches are records already.
					_ = c.raw.SetWriteDeadline(time.Now().Add(idle))
					if _, err := out.Write(b[off : off+n]); err != nil {
						w.failed.Store(true)
						// The owner may be blocked in Read on a peer that is gone:
						// closing makes it return and end the connection.
						_ = c.raw.Close()
						c.Wake()
					}
				}
				off += n
				p := w.pending.Add(-int64(n))
				w.lastDone.Store(monoNow())
				if l := w.level.Load(); l >= 0 && p <= l && w.level.CompareAndSwap(l, -1) {
					c.Wake()
				}
			}
		}
		w.mu.Lock()
		for i, bt := range batch {
			if cap(bt.b) <= maxFreeBuf && len(w.free) < 2 {
				w.free = append(w.free, bt.b[:0])
			}
			batch[i] = item{}
		}
		w.spare = batch[:0]
		w.mu.Unlock()
	}
}
