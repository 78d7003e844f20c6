package stdengine

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/celeris-dev/celeris/internal/conncore"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// aLongTimeAgo is a read deadline in the past: it makes a pending Read return.
var aLongTimeAgo = time.Unix(1, 0)

// errTimeout ends a connection past its read-header or idle deadline.
var errTimeout = errors.New("stdengine: timeout")

// Read buffers. A connection waits for its next request with a small buffer of
// its own (most requests fit in it and are consumed whole), and takes a pooled
// bufSize buffer while more comes at once (a large head, a body, HTTP/2 frames),
// growing it on demand up to MaxBufferedInput. It goes back to the small one once
// its input is consumed and the last read was small: an idle keep-alive
// connection holds 2 KiB, not 32 (crypto/tls keeps its own record buffer besides).
const (
	smallSize = 2 << 10
	bufSize   = 32 << 10 // a TLS record's plaintext is at most 16 KiB
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, bufSize); return &b }}

// conn is one connection. Fields not marked otherwise are owned by its owner
// goroutine (serve), which plays the part of the event loop for it: it does
// the I/O, and its core (internal/conncore) the per-connection rules.
type conn struct {
	eng    *Engine
	nc     net.Conn // what the protocol's bytes go through: raw, or a *tls.Conn over raw
	raw    net.Conn // the accepted connection
	remote net.Addr
	tls    *tls.ConnectionState // set by the owner after the handshake, before the protocol exists

	core conncore.Core
	out  []byte  // output batch of the current iteration
	in   []byte  // read buffer (small, pooled or grown); in[r:w] is unconsumed input
	bufp *[]byte // the pooled buffer in holds, nil if none
	// bigBuf: bufp is from the engine's bigPool (MaxBufferedInput bytes), not bufPool.
	bigBuf bool
	r, w   int
	last   int // bytes the last Read returned

	// The deadline (monoNow, as every time here; 0: none) is the core's
	// (conncore.Core.Deadline), asked at the wait after each event (input,
	// a wake-up), as the epoll engine asks after each. The clock is read once
	// per wait (a clock read costs 100-200 ns where the VM has no fast clock
	// source): what happened since the last wait is dated by the next one, a
	// few µs late at most.
	dl      int64
	dlAt    int64 // when dl was asked for
	event   bool  // input came or was consumed, or a wake-up was served, since dl was asked for
	held    bool  // the input failed with a direct run owing its answer (conncore.Core.Hold): no more reading
	dlSet   int64 // read deadline last set (0: none)
	dlDirty bool  // the read deadline is not dlSet (a timeout fired, or Wake moved it)

	reading atomic.Bool // the owner is in (or about to enter) Read: Wake must interrupt it
	dlMoved atomic.Bool // Wake moved the read deadline into the past

	woken   atomic.Bool   // a wake-up is pending (coalescing)
	wakeCh  chan struct{} // a token per wake-up, for an owner that is not reading
	live    atomic.Bool   // the owner serves (after the handshake): Wake may interrupt Read
	drain   atomic.Bool   // shutdown asked this connection to finish
	aborted atomic.Bool   // the engine stops: close now

	wr writer

	// Inline writes (writeNow): the socket, and the function run on it with its
	// argument and result. rc is nil where the connection has no descriptor.
	rc          syscall.RawConn
	writeFdFunc func(fd uintptr) bool
	nowBuf      []byte
	nowN        int

	// Direct runs (direct.go): a task the protocol asked the owner to run itself,
	// the state of the one running, and its watch.
	direct       httpmsg.Task
	runTask      httpmsg.Task  // the direct run in progress: set before its start, read by whoever moves it
	dstate       atomic.Uint64 // the last direct run's number<<2 | directIdle, directRunning or directMoved
	dstateAtTick atomic.Uint64 // dstate at the watcher's previous tick
	watchState   atomic.Int32  // watchUnlisted, watchListed: listed with the engine's watcher

	tio       *tlsIO       // TLS: what crypto/tls reads and writes through; nil in plaintext
	collected atomic.Int64 // TLS: bytes of records collected and not yet emitted (tio.out)

	small [smallSize]byte // the read buffer while input is light
}

func newConn(e *Engine, nc net.Conn) *conn {
	c := &conn{eng: e, nc: nc, raw: nc, remote: nc.RemoteAddr(), wakeCh: make(chan struct{}, 1)}
	c.core = *conncore.New(c, &e.cfg.Protocols, e.to)
	if e.cfg.TLSConfig != nil {
		c.tio = &tlsIO{Conn: nc, c: c}
		c.nc = tls.Server(c.tio, e.cfg.TLSConfig)
	}
	if c.rc = rawConnOf(nc); c.rc != nil {
		c.writeFdFunc = c.writeFd
	}
	c.wr.init(c)
	return c
}

// Write appends b to the output batch (httpmsg.Conn). Owner only.
func (c *conn) Write(b []byte) { c.out = append(c.out, b...) }

// WriteOwned queues b (httpmsg.OwnedWriter), keeping b itself while the batch is
// empty (httpmsg.AppendOwned).
func (c *conn) WriteOwned(b []byte) []byte {
	var spare []byte
	c.out, spare = httpmsg.AppendOwned(c.out, b)
	return spare
}

// Wake makes the owner run OnWake soon (httpmsg.Conn); any goroutine. A Wake
// while c's direct run is in progress detaches it (httpmsg.DirectRunner): the
// owner is needed beside the run.
func (c *conn) Wake() {
	c.Detach()
	c.wakeUp()
}

// wakeUp is Wake's signal. The first wake-up since the owner last looked
// interrupts a pending Read by moving the read deadline into the past, and
// leaves a token for an owner waiting without reading.
func (c *conn) wakeUp() {
	if c.woken.CompareAndSwap(false, true) {
		select {
		case c.wakeCh <- struct{}{}:
		default:
		}
		// Only an owner in Read needs the deadline moved: one that is not
		// reading looks at woken before it reads (wait stores reading, then
		// loads woken; this stores woken, then loads reading: one of the two
		// sees the other). Not during the TLS handshake, which runs under its
		// own deadline, nor after a hijack (live).
		if c.live.Load() && c.reading.Load() {
			c.dlMoved.Store(true)
			_ = c.nc.SetReadDeadline(aLongTimeAgo)
		}
	}
}

// Close closes the connection after the output batch is written (httpmsg.Conn).
func (c *conn) Close() { c.core.Close() }

// RemoteAddr is the peer address (httpmsg.Conn).
func (c *conn) RemoteAddr() net.Addr { return c.remote }

// OutboundBuffered is how much written output the socket has not taken yet: the
// writer's queue (and over TLS the records not yet emitted), the counterpart of
// gnet's outbound buffer.
func (c *conn) OutboundBuffered() int {
	return int(c.wr.pending.Load() + c.collected.Load())
}

// TLSConnectionState is the TLS state of the connection, nil for plaintext
// (httpmsg.TLSConn).
func (c *conn) TLSConnectionState() *tls.ConnectionState { return c.tls }

func (c *conn) requestDrain() {
	if c.drain.CompareAndSwap(false, true) {
		c.Wake()
	}
}

// abort closes the connection now (engine stop): a blocked Read or Write returns.
// It closes the raw connection: a TLS close would first try to send an alert.
func (c *conn) abort() {
	c.aborted.Store(true)
	_ = c.raw.Close()
	c.woken.Store(false)
	c.Wake()
}

// serve is the owner goroutine.
func (c *conn) serve() {
	if c.eng.cfg.TLSConfig != nil && !c.handshake() {
		_ = c.raw.Close()
		c.eng.remove(c)
		return
	}
	c.in = c.small[:]
	// The first bytes must come within the read-header timeout.
	c.dlAt = monoNow()
	c.dl = c.dlAt + int64(c.eng.to.ReadHeader)
	c.live.Store(true)
	c.dlDirty = true
	c.run()
}

// run is the owner's loop and the end of the connection; a direct run that
// detached (direct.go) leaves them to the goroutine that took the loop over.
func (c *conn) run() {
	err := c.loop()
	if err == errMoved {
		return
	}
	c.finish(err)
	c.eng.remove(c)
}

// loop runs the connection until it closes; it returns why.
func (c *conn) loop() error {
	for {
		if c.aborted.Load() {
			return ErrStopped
		}
		if c.woken.Load() {
			c.woken.Store(false)
			// Load first: the swap is a locked instruction, and a wake-up
			// moves the deadline only while the owner reads.
			if c.dlMoved.Load() && c.dlMoved.Swap(false) {
				c.dlDirty = true
			}
			if c.drain.Load() {
				c.core.AskDrain()
			}
			c.core.Wake()
			c.event = true
		}
		if !c.held {
			c.feed()
		}
		if t := c.direct; t != nil {
			// A handler the protocol gave this goroutine (RunDirect). Answers
			// to earlier requests (inline routes) leave first: the handler may
			// take long. Its final hand-off woke the loop: the next iteration
			// writes its answer.
			c.direct = nil
			if len(c.out) > 0 {
				c.flush()
			}
			c.emit()
			// The input may have failed too (a malformed request pipelined
			// behind the one that runs): the core holds the failure until the
			// handler answered, here or on the owner that takes the loop over
			// if the run detaches (held before the run: a detach starts the
			// new owner from inside it).
			c.held = c.core.Hold()
			if !c.runDirect(t) {
				return errMoved
			}
			continue
		}
		c.flush()
		if c.wr.failed.Load() {
			return io.ErrClosedPipe // the peer is gone; the writer closed the socket
		}
		if c.core.Closing() {
			return c.core.Err()
		}
		if c.core.InputEnded() && c.core.Done(c.r < c.w, c.OutboundBuffered() > 0) {
			return nil // everything owed after the end of input was answered
		}
		if c.r == c.w && !c.core.InputEnded() && c.core.Busy() && !c.woken.Load() {
			// A worker has the request and no input is left: let it run first.
			// A short handler answers before the owner reads (on one P, always),
			// which saves the read that would find nothing (EAGAIN), parking in
			// the poller and the wake-up through the read deadline.
			runtime.Gosched()
		}
		if err := c.wait(); err != nil {
			return err
		}
	}
}

// feed presents the unconsumed input to the core (which chooses the protocol,
// feeds it and switches it) a window at a time, while the protocol takes all it
// is given. Once the input ended, all that is left goes at once: a protocol told
// of the end (HTTP/1.1 feeding a streamed body) takes it as the rest.
func (c *conn) feed() {
	for c.r < c.w && !c.core.Closing() {
		buf := c.in[c.r:c.w]
		if len(buf) > c.eng.cfg.PeekWindow && !c.core.InputEnded() {
			buf = buf[:c.eng.cfg.PeekWindow]
		}
		n := c.core.Feed(buf, 0) // dated by the next wait's deadline
		if n == 0 {
			return
		}
		c.event = true
		c.r += n
		if c.r == c.w {
			c.r, c.w = 0, 0
			return
		}
		if n < len(buf) {
			return
		}
	}
}

// flush puts the iteration's output on the socket (send) and tells the core how
// much output is unsent (conncore.Core.FlushedLevel: AfterFlush, DrainLevel).
// Over TLS the batch is encrypted here, in one tls.Conn.Write, into records that
// tlsIO collects; they are emitted now when the protocol waits for output to
// drain, and otherwise held until the owner is about to block (tlsIO.Read,
// waitWake, finish), so that iterations over input crypto/tls already holds share
// one write.
func (c *conn) flush() {
	if len(c.out) > 0 {
		if c.tio != nil {
			c.flushTLS()
		} else {
			c.out = c.send(c.out)
		}
	}
	pending := c.OutboundBuffered()
	level := c.core.FlushedLevel(pending)
	if c.core.InputEnded() && level < 0 && pending > 0 {
		// After the end of input only a wake-up brings the owner back: ask for
		// one when the output is written, to close then.
		level = 0
	}
	if level >= 0 {
		// Someone waits for the output to drain: the writer must see all of it.
		c.emit()
	}
	if c.wr.level.Load() != int64(level) {
		// Stored only on a change (mostly it stays -1): the writer only ever
		// moves it to -1.
		c.wr.level.Store(int64(level))
	}
	if level >= 0 && c.wr.pending.Load() <= int64(level) {
		// The writer got there before it could see the level.
		c.woken.Store(true)
	}
}

// send puts b, an output batch the owner gives away, on the socket: while the
// writer is idle, as much as the socket takes without blocking is written at once
// from the owner goroutine (with one request in flight, all of it: no goroutine
// start and hand-off per response); the rest is queued for the writer, which
// writes it in order and may block. It returns an empty buffer for the owner's
// next batch. Owner only.
func (c *conn) send(b []byte) []byte {
	if !c.wr.failed.Load() && c.wr.idle() {
		n := c.writeNow(b)
		if n == len(b) {
			if cap(b) > maxFreeBuf {
				return nil // as the writer does: a large batch's buffer is not kept
			}
			return b[:0]
		}
		return c.wr.pushFrom(b, n, false)
	}
	return c.wr.push(b, false)
}

// tlsCollectMax is the largest TLS batch the owner encrypts itself; a larger one
// goes to the writer as plaintext, encrypted slice by slice as the socket takes
// it, so that a client that does not read holds one copy of it, not two.
const tlsCollectMax = writeSlice

// flushTLS encrypts the output batch into collected records (one
// tls.Conn.Write) while the writer is idle: records are numbered when they are
// made, so the owner makes none while the writer has plaintext to encrypt. A
// large batch, or one while the writer runs, is queued as plaintext behind what
// was collected.
func (c *conn) flushTLS() {
	if len(c.out) <= tlsCollectMax && c.wr.idle() {
		c.tio.collecting = true
		_, _ = c.nc.Write(c.out) // collected: never blocks, never fails
		c.tio.collecting = false
		c.collected.Store(int64(len(c.tio.out)))
		c.out = c.out[:0]
		return
	}
	c.emit()
	c.out = c.wr.push(c.out, true)
}

// emit sends the TLS records collected so far (a no-op in plaintext). Owner only.
func (c *conn) emit() {
	if c.tio == nil || len(c.tio.out) == 0 {
		return
	}
	c.tio.out = c.send(c.tio.out)
	c.collected.Store(0)
}

// wait blocks until input arrives, a wake-up comes or the deadline passes.
func (c *conn) wait() error {
	now := monoNow()
	// The deadline is the core's (conncore.Core.Deadline), asked for after
	// an event. Unsent output is the writer's, bounded by its write deadline
	// (each slice within the idle timeout), so the core is told of none; what
	// the writer does between events counts as activity instead: while it has
	// output the deadline is asked for at every wait, and a write it completed
	// since the deadline was asked for is an event dated when it completed.
	if c.event || c.wr.pending.Load() > 0 {
		c.event = false
		c.dl, c.dlAt = c.core.Deadline(now, c.unread(), 0), now
	} else if done := c.wr.lastDone.Load(); done > c.dlAt {
		c.dl, c.dlAt = c.core.Deadline(done, c.unread(), 0), now
	}
	dl := c.dl
	if dl != 0 && now >= dl {
		return errTimeout
	}
	if c.core.InputEnded() || c.held || c.w-c.r >= c.eng.cfg.MaxBufferedInput {
		// Nothing to read (the input ended, or failed), or enough unconsumed
		// input: TCP flow control pushes back on the client while the protocol
		// catches up.
		return c.waitWake(dl, now)
	}
	c.makeRoom()
	if c.dlDirty || dl != 0 && (c.dlSet == 0 || dl < c.dlSet) {
		// A later deadline than the one set is left as it is (the deadline
		// moves with every request; setting it costs a clock read and the
		// poller's timer): when the earlier one passes, the Read returns, and
		// the next wait sets the right one or times out.
		c.dlDirty = false
		c.dlSet = dl
		t := time.Time{}
		if dl != 0 {
			t = monoTime(dl)
		}
		_ = c.nc.SetReadDeadline(t)
	}
	c.reading.Store(true)
	if c.woken.Load() {
		c.reading.Store(false)
		return nil // see Wake
	}
	n, err := c.nc.Read(c.in[c.w:])
	c.reading.Store(false)
	if n > 0 {
		c.w += n
		c.last = n
		c.event = true
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		// A wake-up, a stale wake-up's deadline, an earlier deadline left in
		// place, or a deadline that passed (the next wait tells them apart).
		c.dlDirty = true
		return nil
	}
	if c.aborted.Load() {
		return ErrStopped
	}
	if errors.Is(err, io.EOF) {
		// The client half-closed or closed (conncore.Core.EndOfInput): serve
		// what is owed without reading, or close once the queued output is
		// written (finish).
		c.event = true
		if c.core.EndOfInput(c.OutboundBuffered()) != conncore.EndServe {
			return io.EOF
		}
		return nil
	}
	return err
}

// unread is the input buffered and not consumed that may be a partial request
// (none once the input ended: nothing more will come to complete it).
func (c *conn) unread() int {
	if c.core.InputEnded() {
		return 0
	}
	return c.w - c.r
}

// waitWake waits without reading, for a wake-up or the deadline dl (0: none).
func (c *conn) waitWake(dl, now int64) error {
	c.emit()
	if c.woken.Load() {
		return nil
	}
	var timeout <-chan time.Time
	if dl != 0 {
		t := time.NewTimer(time.Duration(dl - now))
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-c.wakeCh:
	case <-timeout:
	}
	return nil
}

// makeRoom compacts, swaps or grows the read buffer so that a Read has space.
func (c *conn) makeRoom() {
	if c.r == c.w {
		c.r, c.w = 0, 0
		if len(c.in) > smallSize && c.last <= smallSize {
			c.releaseBuf()
		}
	}
	if c.r > 0 && (c.w == len(c.in) || c.r >= len(c.in)/2) {
		c.w = copy(c.in, c.in[c.r:c.w])
		c.r = 0
	}
	if c.w < len(c.in) {
		return
	}
	if len(c.in) == smallSize {
		bp := bufPool.Get().(*[]byte)
		copy(*bp, c.in[:c.w])
		c.in, c.bufp = *bp, bp
		return
	}
	// Past the pooled buffer: the largest the input may get (MaxBufferedInput),
	// from a pool of its own, so that an upload whose body backs up now and then
	// does not allocate a growing series of buffers each time (50-100 MB of
	// garbage per GiB of a chunked upload when it did).
	max := c.eng.cfg.MaxBufferedInput
	var bp *[]byte
	if v, _ := c.eng.bigPool.Get().(*[]byte); v != nil && len(*v) == max {
		bp = v
	} else {
		b := make([]byte, max)
		bp = &b
	}
	copy(*bp, c.in[:c.w])
	c.releaseBuf()
	c.in, c.bufp, c.bigBuf = *bp, bp, true
}

// releaseBuf gives a pooled buffer back and makes the small one the read buffer
// (its content is dropped: call it when in is empty or replaced).
func (c *conn) releaseBuf() {
	if c.bufp != nil {
		if c.bigBuf {
			c.eng.bigPool.Put(c.bufp)
		} else {
			bufPool.Put(c.bufp)
		}
		c.bufp, c.bigBuf = nil, false
	}
	c.in = c.small[:]
}

// finish closes the connection once the writer wrote what was queued, then the
// protocol (its handlers' contexts are cancelled).
func (c *conn) finish(err error) {
	c.live.Store(false)
	c.emit()
	c.wr.end()
	<-c.wr.done // bounded: every write has a deadline, and abort closes the socket
	if c.core.IsHijacked() {
		c.releaseBuf()
		c.in = nil
		return // the connection is the hijacker's now
	}
	// A lingering close where the core says (conncore.Core.Linger), but not
	// after a timeout, on a dead socket or when the engine stops.
	if c.core.Linger() && !c.aborted.Load() && !c.wr.failed.Load() && !errors.Is(err, errTimeout) {
		c.lingerClose()
	}
	_ = c.nc.Close()
	if c.aborted.Load() {
		err = ErrStopped
	}
	if errors.Is(err, errTimeout) {
		err = nil
	}
	c.core.Closed(err)
	c.releaseBuf()
	c.in = nil
}
