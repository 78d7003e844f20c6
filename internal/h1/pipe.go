package h1

import (
	"context"
	"errors"
	"io"
	"sync"
)

// pipeMax bounds the unread body bytes a pipe holds. Past it the loop stops
// moving bytes out of the engine's buffer until the handler reads.
const pipeMax = 256 << 10

// ErrBodyAborted is returned by a streamed request body's Read when the connection
// closed before the body was complete.
var ErrBodyAborted = errors.New("h1: connection closed before the request body was complete")

// bodyPipe streams a request body from the event loop (writer) to the handler
// (reader). Every field is guarded by mu.
type bodyPipe struct {
	mu      sync.Mutex
	cond    sync.Cond
	buf     []byte // unread bytes are buf[off:]
	off     int
	done    bool  // the writer finished (complete body, or err)
	err     error // the error the reader gets after buf drains (nil: io.EOF)
	blocked bool  // the loop stopped feeding because the pipe is full
	need100 bool  // send "100 Continue" on the first Read (RFC 9110 §10.1.1)
	closed  bool  // the handler closed the body: reads fail, the rest is dropped
	conn    *Conn
	ex      *exchange // read only by the reader (the handler's goroutine)
}

func newPipe(cn *Conn, ex *exchange, need100 bool) *bodyPipe {
	p := &bodyPipe{conn: cn, ex: ex, need100: need100}
	p.cond.L = &p.mu
	if b, ok := pipeBufs.Get().(*[]byte); ok {
		p.buf = (*b)[:0]
		*b = nil
		pipeBufPtrs.Put(b)
	} else {
		p.buf = make([]byte, 0, pipeMax)
	}
	return p
}

// Pipe buffers are pooled: a fast upload streams gigabytes through pipes, and a
// buffer grown anew for every request (a quarter MiB each) would be garbage enough
// to raise the heap, hence the RSS, with the number of requests. A pipe's buffer
// never grows past pipeMax: feedPipe appends at most the space left.
var (
	pipeBufs    sync.Pool // *[]byte of cap pipeMax
	pipeBufPtrs sync.Pool // empty *[]byte, so that Put allocates nothing
)

// recycle ends the pipe once its exchange is released (loop; the handler
// returned) and pools its buffer. A Read after that (a handler that kept the
// reader past its return) gets the end of the body, never another request's bytes.
func (p *bodyPipe) recycle() {
	p.mu.Lock()
	buf := p.buf
	p.buf, p.off = nil, 0
	if !p.done {
		p.done, p.err = true, ErrBodyAborted
	}
	p.mu.Unlock()
	if cap(buf) != pipeMax {
		return
	}
	b, _ := pipeBufPtrs.Get().(*[]byte)
	if b == nil {
		b = new([]byte)
	}
	*b = buf[:0]
	pipeBufs.Put(b)
}

// Read reads body bytes as they arrive. The first Read of a request that expects
// 100-continue sends the interim response.
func (p *bodyPipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	if p.need100 {
		p.need100 = false
		// RFC 9110 §15.2: no interim response once the final one started.
		if !p.done && !p.ex.answered {
			p.mu.Unlock()
			p.conn.sendInterim(Continue100)
			p.mu.Lock()
		}
	}
	for len(p.buf)-p.off == 0 && !p.done && !p.closed {
		p.cond.Wait()
	}
	if p.closed {
		p.mu.Unlock()
		return 0, ErrBodyClosed
	}
	if len(p.buf)-p.off == 0 {
		err := p.err
		p.mu.Unlock()
		if err == nil {
			err = io.EOF
		}
		return 0, err
	}
	n := copy(b, p.buf[p.off:])
	p.off += n
	if p.off == len(p.buf) {
		p.buf, p.off = p.buf[:0], 0
	}
	wake := p.blocked && len(p.buf)-p.off < pipeMax/2
	if wake {
		p.blocked = false
	}
	p.mu.Unlock()
	if wake {
		p.conn.c.Wake()
	}
	return n, nil
}

// ErrBodyClosed is returned by a streamed request body's Read after Close.
var ErrBodyClosed = errors.New("h1: read on a closed request body")

// Close makes the pending and later Reads fail with ErrBodyClosed (a handler,
// or its reading goroutine, is done with the body: net/http's Body.Close unblocks
// a concurrent Read too). The rest of the body is not read: the connection closes
// after the response unless it had all arrived.
func (p *bodyPipe) Close() error {
	p.mu.Lock()
	p.closed = true
	p.need100 = false
	p.buf, p.off = p.buf[:0], 0
	wake := p.blocked
	p.blocked = false
	p.cond.Broadcast()
	p.mu.Unlock()
	if wake {
		p.conn.c.Wake()
	}
	return nil
}

// sent100 records that the handler sent 100 Continue itself.
func (p *bodyPipe) sent100() {
	p.mu.Lock()
	p.need100 = false
	p.mu.Unlock()
}

// maxDiscard bounds the rest of a request body that is read and dropped after its
// handler left it unread, so that the connection can serve the next request (as
// net/http's maxPostHandlerReadBytes). A longer rest closes the connection.
const maxDiscard = 256 << 10

// discardable reports, when the response head is written, whether the rest of the
// body can be read and dropped after the handler returns, keeping the connection
// (worker side): it arrived whole, or it is coming (no 100-continue is owed) and,
// for a Content-Length body, at most maxDiscard bytes remain.
func (p *bodyPipe) discardable(ex *exchange) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.done:
		return p.err == nil
	case p.need100:
		// RFC 9110 §10.1.1: the client may wait for the 100 that was never sent
		// and never send the body; the rest of the input cannot be told apart
		// from the next request (Expect desync): close.
		return false
	case ex.chunked:
		return true // the rest is unknown: serve decides (discardRest)
	}
	// ex.fed is written by the loop under p.mu.
	return ex.msg.ContentLength-ex.fed+int64(len(p.buf)-p.off) <= maxDiscard
}

// discardRest reads and drops what its handler left of a streamed body (worker,
// after the handler returned; the response waits in the worker's buffer, so it is
// sent once the request ended: RFC 9112 §7.1, a chunked body ends with the final
// CRLF of its trailer section). When more than maxDiscard bytes remain, or the body
// fails (framing error, closed connection), the connection closes after the
// response: the rest must never be parsed as a request (0.CL desync).
func (ex *exchange) discardRest() {
	n, err := io.CopyN(io.Discard, ex.pipe, maxDiscard+1)
	if err != io.EOF || n > maxDiscard {
		ex.keepAlive = false
	}
}

// abort ends the body with err (the connection closed).
func (p *bodyPipe) abort(err error) {
	p.mu.Lock()
	if !p.done {
		p.done, p.err = true, err
	}
	p.cond.Broadcast()
	p.mu.Unlock()
}

// feedPipe moves body bytes of the streaming exchange from in to its pipe (event
// loop). It stops when the pipe is full; the reader wakes the loop when it drained.
func (cn *Conn) feedPipe(in []byte) int {
	ex := cn.streamEx
	p := ex.pipe
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.off > 0 {
		n := copy(p.buf, p.buf[p.off:])
		p.buf, p.off = p.buf[:n], 0
	}
	space := pipeMax - len(p.buf)
	if space <= 0 {
		p.blocked = true
		return 0
	}
	var (
		n        int
		complete bool
		err      error
		avail    = len(in)
		// The client's input ended and all that is left of it fits: a body not
		// complete after this call never will be.
		final = cn.inputEnded && avail <= space
	)
	if !ex.chunked {
		n = min(int(ex.msg.ContentLength-ex.fed), len(in), space)
		if !p.closed {
			p.buf = append(p.buf, in[:n]...)
		}
		ex.fed += int64(n)
		complete = ex.fed == ex.msg.ContentLength
	} else {
		max := cn.lim.MaxBodySize
		if max <= 0 {
			max = DefaultMaxBodySize
		}
		in = in[:min(len(in), space)]
		before := len(p.buf)
		// Decode counts the body it decoded against max itself.
		n, p.buf, complete, err = cn.chunk.Decode(in, p.buf, max)
		ex.fed += int64(len(p.buf) - before)
		if p.closed {
			p.buf = p.buf[:0] // nobody reads it
		}
		if complete {
			ex.copyTrailers(cn.chunk.Trailers())
		}
	}
	if final && !complete && err == nil {
		err = ErrBodyAborted
	}
	switch {
	case err != nil:
		// The handler gets the error (its status: 400 or 413) from Read; the
		// connection closes after its response, the framing being unsafe now.
		p.done, p.err = true, err
		cn.streamEx = nil
		cn.closing = true
	case complete:
		p.done = true
		cn.streamEx = nil
	case n < avail || len(p.buf) >= pipeMax:
		// Bytes are left in the engine's buffer and no new read may come to
		// resume: the reader wakes the loop once it drained the pipe.
		p.blocked = true
	}
	p.cond.Broadcast()
	return n
}

// sendInterim hands an interim response (100 Continue) to the loop ahead of the
// final response (worker side; the Wake detaches a direct batch).
func (cn *Conn) sendInterim(b []byte) {
	cn.mu.Lock()
	cn.ready = append(cn.ready, b...)
	cn.mu.Unlock()
	cn.c.Wake()
}

// Context returns a context cancelled when the connection closes or the request
// is done (httpmsg: the framework's c.Context()).
func (ex *exchange) Context() context.Context {
	cn := ex.conn
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if ex.ctx == nil {
		ex.ctx, ex.cancel = context.WithCancel(context.Background())
		if cn.closed || cn.eof {
			ex.cancel()
		}
	}
	return ex.ctx
}
