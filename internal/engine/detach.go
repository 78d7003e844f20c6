//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import (
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/celeris-dev/celeris/internal/conncore"
)

// Serving after the client's half-close.
//
// A client may send its request and then shut down its sending side (shutdown
// SHUT_WR: `nc -N`, many scripted clients) while it still reads. gnet treats the
// end of input as the end of the connection: it calls OnClose and closes the fd at
// once. An answer that a handler goroutine is still preparing would be lost.
//
// gnet also writes the output it still holds only once, best effort, as it closes,
// and drops what the socket did not take: a large answer to a client that
// half-closed while reading it would be cut short.
//
// When the input ends while the protocol says it still owes answers (httpmsg.InputEnder), or
// while gnet holds unsent output, the engine detaches the connection from gnet
// instead of closing it: it duplicates the fd before gnet closes its own, moves
// gnet's unsent output to its own writer (takeOutbound), keeps the input gnet had
// buffered, and goes on
// driving the protocol from the same event loop's wake-up queue. Output then
// bypasses gnet: a goroutine writes it to the duplicate through the runtime's
// poller, in slices each bounded by the idle timeout. Once the protocol has nothing
// left to answer, the output is flushed and the socket closed; until then the
// connection counts as open (graceful shutdown waits for it). A client that closed
// completely looks the same until a write fails, which ends the connection; the
// protocol cancels the requests' contexts as net/http does. The detached state is
// touched by the event loop only, except the writer's queue, which has a mutex.

// detached is the I/O of a connection gnet has closed.
type detached struct {
	f   *os.File
	in  []byte // input buffered when the peer's input ended; consumed from off
	off int

	pending atomic.Int64 // bytes queued and not yet written
	failed  atomic.Bool  // a write failed: the peer is gone

	mu     sync.Mutex
	cond   sync.Cond
	queue  [][]byte // guarded by mu
	ending bool     // guarded by mu: close the file once the queue is written
}

// detach takes c over from gnet, which is closing it with err; it reports whether
// it did (gnet then closes only its own fd). Loop only, from OnClose. The Core
// decides (EndOfInput): answers owed are served detached, output unsent is
// written detached before the close, and otherwise the connection simply closes.
func (c *conn) detach(err error) bool {
	if !errors.Is(err, io.EOF) {
		return false
	}
	pending := c.gc.OutboundBuffered()
	end := c.core.EndOfInput(pending)
	if end == conncore.EndClose {
		return false
	}
	fd, derr := c.gc.Dup()
	if derr != nil {
		return false
	}
	var out []byte
	if pending > 0 {
		// gnet would write its buffer once, best effort, as it closes, and lose
		// what the socket did not take: the writer sends it first instead.
		var ok bool
		if out, ok = takeOutbound(c.gc); !ok {
			_ = unix.Close(fd)
			return false
		}
	}
	f := os.NewFile(uintptr(fd), "celeris-detached") // non-blocking: uses the runtime poller
	if f == nil {
		return false
	}
	d := &detached{f: f}
	d.cond.L = &d.mu
	if len(out) > 0 {
		d.push(out)
	}
	if end == conncore.EndServe {
		// The input left unconsumed becomes the detached connection's.
		c.takeInput()
		d.in, d.off = c.in, c.inOff
		c.in, c.inOff = nil, 0
	}
	c.deadline.Store(0)
	c.pendingOut.Store(false)
	c.det.Store(d)
	go d.writer(c)
	if end != conncore.EndServe {
		// Nothing owed (or a protocol that cannot serve past the end of input,
		// HTTP/2, whose streams wait on WINDOW_UPDATEs and bodies that cannot
		// come): only the output already produced is written; the protocol
		// closes now, as gnet would close it.
		c.finishDetached(err)
		return true
	}
	c.Wake() // the first onDetached: the rest of the input, or the end of a body
	return true
}

// onDetached is onTraffic for a detached connection (loop, on wake-up): the
// protocol writes what its handlers handed back and parses what input is left,
// until the Core says it is done.
func (c *conn) onDetached(d *detached) {
	c.wake()
	for d.off < len(d.in) && !c.core.Closing() {
		n := c.core.Feed(d.in[d.off:], c.eng.now.Load())
		d.off += n
		if n == 0 {
			// Either an incomplete request (no more input will come) or the
			// protocol holds requests back while much output is queued: then the
			// writer's wake-ups bring the loop back here as the output drains.
			break
		}
	}
	inputLeft := d.off < len(d.in)
	if len(c.out) > 0 {
		d.push(c.out)
		c.out = nil
	}
	pending := int(d.pending.Load())
	c.core.Flushed(pending)
	if d.failed.Load() || c.core.Done(inputLeft, pending > 0) {
		c.finishDetached(c.core.Err())
	}
}

// finishDetached ends the protocol of a detached connection; the writer flushes,
// closes, and only then removes the connection from the engine's set, so that a
// graceful shutdown waits for the answer to be written.
func (c *conn) finishDetached(err error) {
	c.closed.Store(true)
	c.det.Load().end()
	c.core.Closed(err)
}

// push queues b for the writer, which owns it from then on (loop).
func (d *detached) push(b []byte) {
	d.pending.Add(int64(len(b)))
	d.mu.Lock()
	d.queue = append(d.queue, b)
	d.mu.Unlock()
	d.cond.Signal()
}

// end makes the writer close the file once the queue is written.
func (d *detached) end() {
	d.mu.Lock()
	d.ending = true
	d.mu.Unlock()
	d.cond.Signal()
}

// abort closes the file now (engine stop); a blocked write returns.
func (d *detached) abort() {
	d.failed.Store(true)
	d.end()
	_ = d.f.Close()
}

// writer writes the queue in order, then closes the file. After a failed write the
// rest is dropped; the loop is woken so that it ends the connection (and cancels
// the requests still served) instead of serving a peer that is gone.
func (d *detached) writer(c *conn) {
	for {
		d.mu.Lock()
		for len(d.queue) == 0 && !d.ending {
			d.cond.Wait()
		}
		if len(d.queue) == 0 {
			d.mu.Unlock()
			break
		}
		b := d.queue[0]
		d.queue[0] = nil
		d.queue = d.queue[1:]
		d.mu.Unlock()
		for len(b) > 0 {
			// Slices: the deadline bounds each one, so a slow but steady reader
			// keeps the connection (as updateWriteDeadline does for gnet's output),
			// and pending drops as bytes leave (streaming back-pressure).
			n := min(len(b), writeSlice)
			if !d.failed.Load() {
				_ = d.f.SetWriteDeadline(time.Now().Add(c.eng.cfg.IdleTimeout))
				if _, err := d.f.Write(b[:n]); err != nil {
					d.failed.Store(true)
				}
			}
			b = b[n:]
			d.pending.Add(-int64(n))
			c.Wake() // progress or failure
		}
	}
	_ = d.f.Close()
	c.loop.forget(c)
}

// writeSlice is the most a detached connection's writer writes under one deadline.
const writeSlice = 256 << 10
