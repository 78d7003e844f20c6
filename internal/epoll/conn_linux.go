package epoll

import (
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/celeris-dev/celeris/internal/conncore"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// errHijacked: the connection left the engine (Hijack), or cannot now.
var errHijacked = errors.New("epoll: connection hijacked or closing")

// conn is one connection; every field but woken is owned by its loop.
type conn struct {
	l    *loop
	fd   int
	peer net.Addr
	core *conncore.Core

	in    []byte // input not consumed by the protocol, from inOff
	inOff int
	out   []byte // output batch of the current event
	pend  []byte // output the socket did not take yet, from pendOff
	pend0 int
	spare []byte // an empty output buffer for the next batch

	interest  uint32 // the epoll events asked for
	paused    bool   // reading paused: too much input unconsumed
	lingering bool   // output shut down; input dropped until the client closes
	flushEnd  bool   // the input ended: write what is queued, then close
	serving   bool   // the input ended with answers owed (conncore.EndServe)
	done      bool   // closed, or hijacked
	prevOut   int    // unsent output at the previous Flushed
	deadline  int64  // unix ns after which the loop closes the connection; 0: none

	woken atomic.Bool // a wake-up is queued (any goroutine)
}

func newConn(l *loop, fd int, peer *net.TCPAddr) *conn {
	c := &conn{l: l, fd: fd, peer: peer}
	if peer == nil {
		c.peer = &net.TCPAddr{}
	}
	c.core = conncore.New(c, &l.e.cfg.Protocols, l.e.to)
	c.deadline = l.now + int64(l.e.to.ReadHeader)
	return c
}

// Write appends b to the output batch (httpmsg.Conn; loop only).
func (c *conn) Write(b []byte) {
	c.l.own.check("Conn.Write")
	c.out = append(c.out, b...)
}

// WriteOwned queues b, keeping b itself while the batch is empty
// (httpmsg.OwnedWriter).
func (c *conn) WriteOwned(b []byte) []byte {
	c.l.own.check("Conn.WriteOwned")
	var spare []byte
	c.out, spare = httpmsg.AppendOwned(c.out, b)
	return spare
}

// Wake has the loop call the protocol's OnWake (httpmsg.Conn; any goroutine).
// Wake-ups coalesce per connection (woken) and per loop (one eventfd write
// until the loop took the queue). A Wake while c's direct run is in progress
// detaches the run (direct_linux.go).
func (c *conn) Wake() {
	if c.l.running.Load() == int32(c.fd) {
		// From c's direct run (or while it runs): the loop is needed beside
		// it, and moves (httpmsg.DirectRunner).
		c.l.detach()
	}
	if c.woken.CompareAndSwap(false, true) {
		c.l.add(c)
	}
}

// Close closes the connection once its output is written (httpmsg.Conn).
func (c *conn) Close() {
	c.l.own.check("Conn.Close")
	c.core.Close()
}

// RemoteAddr is the peer's address (httpmsg.Conn).
func (c *conn) RemoteAddr() net.Addr { return c.peer }

// OutboundBuffered is the output written and not yet taken by the socket
// (httpmsg.OutboundReporter; loop only).
func (c *conn) OutboundBuffered() int {
	c.l.own.check("Conn.OutboundBuffered")
	return len(c.pend) - c.pend0
}

// onEvent serves the epoll events of the connection.
func (c *conn) onEvent(ev uint32) {
	if ev&unix.EPOLLOUT != 0 {
		c.writable()
	}
	if ev&(unix.EPOLLIN|unix.EPOLLRDHUP) != 0 && !c.done {
		c.readable()
	}
	if ev&(unix.EPOLLHUP|unix.EPOLLERR) != 0 && !c.done {
		// Both directions are shut (a reset, or the client's close after our
		// own shutdown): nothing more can be read or written.
		c.close(io.EOF)
	}
}

// readable reads once from the socket and feeds the protocol.
func (c *conn) readable() {
	if c.lingering {
		c.linger()
		return
	}
	if c.paused || c.serving || c.flushEnd {
		return
	}
	if c.woken.Load() {
		c.wakeProto() // work handed back first, as it was asked first
		if c.done {
			return
		}
	}
	buf := c.l.buf
	n, errno := rawRead(c.fd, buf)
	switch {
	case n > 0:
		c.input(buf[:n])
	case n == 0:
		c.endOfInput()
	case errno == unix.EAGAIN || errno == unix.EINTR:
	default:
		c.close(errno)
		return
	}
	if c.l.directConn == c {
		return // the direct run's wake-up settles (loop.runDirect)
	}
	c.settle()
}

// input feeds what arrived, after what was left unconsumed before.
func (c *conn) input(b []byte) {
	if c.core.Closing() {
		return // the protocol is done with input
	}
	if c.inOff == len(c.in) {
		n := c.feed(b)
		if n < len(b) {
			c.keep(b[n:])
		}
		return
	}
	c.keep(b)
	c.feedBuffered()
}

// feed presents b to the protocol a window at a time, and returns how much it
// consumed. Once the input ended, all that is left is presented at once: a
// protocol told of the end (HTTP/1.1 feeding a streamed body) takes what it
// is given as the rest of the input.
func (c *conn) feed(b []byte) int {
	window := c.l.e.cfg.PeekWindow
	if c.serving {
		window = len(b)
	}
	total := 0
	for total < len(b) && !c.core.Closing() && !c.done {
		w := b[total:min(len(b), total+window)]
		n := c.core.Feed(w, c.l.now)
		total += n
		if n < len(w) {
			break
		}
	}
	return total
}

// feedBuffered presents the input kept from earlier reads again.
func (c *conn) feedBuffered() {
	if c.inOff == len(c.in) || c.done {
		return
	}
	c.inOff += c.feed(c.in[c.inOff:])
	if c.inOff >= len(c.in) {
		c.releaseInput()
	}
}

// keep appends b to the connection's unconsumed input.
func (c *conn) keep(b []byte) {
	if c.in == nil {
		c.in = c.l.getInput(len(b))
	}
	if c.inOff > 0 && cap(c.in)-len(c.in) < len(b) {
		k := copy(c.in, c.in[c.inOff:])
		c.in, c.inOff = c.in[:k], 0
	}
	c.in = append(c.in, b...)
}

func (c *conn) releaseInput() {
	if c.in != nil {
		c.l.putInput(c.in)
	}
	c.in, c.inOff = nil, 0
}

// endOfInput: the client's input ended (a read of zero bytes).
func (c *conn) endOfInput() {
	switch c.core.EndOfInput(c.OutboundBuffered() + len(c.out)) {
	case conncore.EndClose:
		c.close(io.EOF)
	case conncore.EndFlush:
		c.flushEnd = true
	case conncore.EndServe:
		c.serving = true
		c.feedBuffered()
	}
}

// onWake serves a wake-up queued by another goroutine (or the loop itself).
func (c *conn) onWake() {
	if c.done {
		return
	}
	c.wakeProto()
	c.settle()
}

// wakeProto runs the protocol's OnWake, then presents the input it left
// (a protocol that held requests back while a handler ran takes them now).
func (c *conn) wakeProto() {
	c.woken.Store(false)
	if c.lingering || c.done {
		return
	}
	c.core.Wake()
	if !c.core.Closing() && !c.flushEnd {
		c.feedBuffered()
	}
}

// settle ends every event: it writes the output batch, tells the protocol,
// and then closes, lingers, pauses or resumes reading, and sets the deadline.
func (c *conn) settle() {
	if c.done {
		return
	}
	if c.core.IsHijacked() {
		return // Hijack finished the connection's part
	}
	if len(c.out) > 0 {
		if !c.flush() {
			return
		}
	}
	out := c.OutboundBuffered()
	if c.core.Flushed(out) && c.prevOut > out {
		c.Wake() // a protocol waiting for the output to drain goes on
	}
	c.prevOut = out
	in := len(c.in) - c.inOff
	closing := c.core.Closing() || c.flushEnd ||
		(c.serving && c.core.Done(in > 0, out > 0))
	if closing {
		if out > 0 {
			c.setInterest(unix.EPOLLOUT)
			c.deadline = c.core.Deadline(c.l.now, 0, out)
			return
		}
		if c.core.Linger() && c.startLinger() {
			return
		}
		c.close(c.core.Err())
		return
	}
	var want uint32
	if c.serving {
		in = 0 // nothing more will come: no read header timeout
	} else {
		limit := c.l.e.cfg.MaxBufferedInput
		switch {
		case !c.paused && in > limit:
			c.paused = true
		case c.paused && in <= limit/2:
			c.paused = false
		}
		if !c.paused {
			want = unix.EPOLLIN | unix.EPOLLRDHUP
		}
	}
	if out > 0 {
		want |= unix.EPOLLOUT
	}
	c.setInterest(want)
	c.deadline = c.core.Deadline(c.l.now, in, out)
}

// flush writes the output batch: at once when nothing waits, else after what
// waits in the same writev. What the socket did not take stays in pend. It
// reports false when the connection closed on a write error.
func (c *conn) flush() bool {
	out := c.out
	waiting := c.pend[c.pend0:]
	var n int
	var errno unix.Errno
	if len(waiting) == 0 {
		n, errno = rawWrite(c.fd, out)
	} else {
		n, errno = rawWritev(c.fd, waiting, out)
	}
	if errno != 0 && errno != unix.EAGAIN && errno != unix.EINTR {
		c.close(errno)
		return false
	}
	if n < len(waiting) {
		c.pend0 += n
		c.pend = append(c.pend, out...)
		c.out = out[:0]
		c.trimOut()
		return true
	}
	n -= len(waiting)
	if len(waiting) > 0 {
		c.recycle(c.pend)
	}
	if n == len(out) {
		c.pend, c.pend0 = nil, 0
		c.out = out[:0]
		c.trimOut()
		return true
	}
	// The batch itself waits: it becomes pend, no copy.
	c.pend, c.pend0 = out, n
	c.out, c.spare = c.spare, nil
	return true
}

// trimOut drops an output buffer grown past 1 MiB: an idle connection does
// not pin a large buffer.
func (c *conn) trimOut() {
	if cap(c.out) > 1<<20 {
		c.out = nil
	}
}

// recycle keeps a written-out buffer for the next batch when small.
func (c *conn) recycle(b []byte) {
	if c.spare == nil && cap(b) <= 1<<20 {
		c.spare = b[:0]
	}
}

// writable writes what waits in pend.
func (c *conn) writable() {
	if c.done {
		return
	}
	if w := c.pend[c.pend0:]; len(w) > 0 {
		n, errno := rawWrite(c.fd, w)
		if errno != 0 && errno != unix.EAGAIN && errno != unix.EINTR {
			c.close(errno)
			return
		}
		c.pend0 += n
		if c.pend0 == len(c.pend) {
			c.recycle(c.pend)
			c.pend, c.pend0 = nil, 0
		}
	}
	if c.serving && !c.core.Closing() {
		c.wakeProto() // input held back while output was queued may go on
	}
	c.settle()
}

// setInterest changes the epoll events asked for.
func (c *conn) setInterest(ev uint32) {
	if ev == c.interest {
		return
	}
	if unix.EpollCtl(c.l.epfd, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: ev, Fd: int32(c.fd), Pad: tagConn}) == nil {
		c.interest = ev
	}
}

// startLinger shuts down the sending side once the answer is written and
// drops what the client still sends, for conncore.LingerTime at most. It
// reports false when the shutdown failed (then the connection just closes).
func (c *conn) startLinger() bool {
	if unix.Shutdown(c.fd, unix.SHUT_WR) != nil {
		return false
	}
	c.lingering = true
	c.releaseInput()
	c.setInterest(unix.EPOLLIN | unix.EPOLLRDHUP)
	c.deadline = c.l.now + int64(conncore.LingerTime)
	return true
}

// linger drops input until the client closes.
func (c *conn) linger() {
	for range 16 {
		n, errno := rawRead(c.fd, c.l.buf)
		switch {
		case n > 0:
			continue
		case n == 0:
			c.close(nil)
		case errno == unix.EAGAIN || errno == unix.EINTR:
		default:
			c.close(nil)
		}
		return
	}
}

// close closes the connection now and ends its protocol with err.
func (c *conn) close(err error) {
	if c.done {
		return
	}
	c.done = true
	c.forget()
	_ = unix.Close(c.fd) // its only descriptor: this removes it from epoll too
	c.core.Closed(err)
	c.releaseInput()
	c.out, c.pend, c.spare = nil, nil, nil
}

// forget removes the connection from the loop's table and the open count.
func (c *conn) forget() {
	if c.fd < len(c.l.conns) && c.l.conns[c.fd] == c {
		c.l.conns[c.fd] = nil
	}
	c.deadline = 0
	c.l.e.open.Add(-1)
}

// Hijack takes the connection out of the engine (httpmsg.Hijacker; loop
// only): the descriptor leaves epoll and becomes a net.Conn served by the Go
// runtime. It returns the input read and not consumed, and the output not yet
// written (earlier answers), which the caller writes first.
func (c *conn) Hijack() (nc net.Conn, buffered, pending []byte, err error) {
	c.l.own.check("Conn.Hijack")
	if c.done || c.core.Closing() || c.serving || c.flushEnd || c.lingering {
		return nil, nil, nil, errHijacked
	}
	// The net.Conn is made first, from a duplicate (net.FileConn duplicates
	// it again into the runtime's poller), so that a failure (out of
	// descriptors) leaves the connection as it was, served by the loop.
	dup, err := unix.FcntlInt(uintptr(c.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, nil, nil, err
	}
	f := os.NewFile(uintptr(dup), "celeris-hijacked")
	nc, err = net.FileConn(f)
	_ = f.Close()
	if err != nil {
		return nil, nil, nil, err
	}
	_ = unix.EpollCtl(c.l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	_ = unix.Close(c.fd) // the engine's descriptor
	c.done = true
	c.forget()
	c.core.Hijacked()
	pending = append(append([]byte(nil), c.pend[c.pend0:]...), c.out...)
	buffered = append([]byte(nil), c.in[c.inOff:]...)
	c.releaseInput()
	c.out, c.pend, c.spare = nil, nil, nil
	return nc, buffered, pending, nil
}
