package h1

import (
	"bytes"
	"crypto/tls"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/work"
)

// ServerConfig is shared by every HTTP/1.x connection of a server.
type ServerConfig struct {
	Limits    Limits
	Handler   httpmsg.Handler
	Pool      *work.Pool
	Logger    *slog.Logger
	EnableH2C bool // honour "Upgrade: h2c" (RFC 7540 §3.2)
	// MaxBatch bounds how many pipelined requests one worker hand-off carries.
	MaxBatch int
	// StreamThreshold: request bodies of non-inline routes larger than this, chunked
	// ones, and those expecting 100-continue stream to the handler as they arrive
	// instead of being buffered whole. Default 64 KiB. An inline route's request
	// whose body is larger than this (declared, or chunked once it grew past it)
	// streams too, its handler running on a worker: buffering it whole would hold
	// up to MaxBodySize per connection.
	StreamThreshold int64
	// RefusalFields, when set, gives the extra header fields of the answers this
	// layer makes itself, to requests no handler sees: parse and limit errors (400,
	// 413, 414, 417, 431, 501, 505) and 503 when no worker takes a batch. It gets
	// the status and runs on the event loop.
	RefusalFields func(status int) []httpmsg.Field
	// RefusalBody, when set, gives the Content-Type and body of the same answers
	// instead of the short text/plain reason ("" and nil: keep it). It runs on the
	// event loop.
	RefusalBody func(status int) (contentType string, body []byte)
	// Active, when set, counts the requests a worker holds: a batch adds its
	// length when it starts and subtracts it when it ends, and its requests are
	// marked Counted. (Inline requests are the Handler's to count.)
	Active *atomic.Int64
	// LearnInPlace: the engine's direct runs (httpmsg.DirectRunner) hold a
	// loop that many connections share. A batch with a request whose route's
	// record says its handler waits (Request.InPlace) goes to a worker, and
	// each request run in place is timed and recorded there (Ran, against
	// SlowTicks). Without it every batch runs in place where the engine can
	// (on the std engine: the connection's own goroutine, which no other
	// connection waits for).
	LearnInPlace bool
	// SlowTicks: a request that holds the loop longer than this
	// (directrun.Ticks) is a slow run of its route's handler.
	SlowTicks int64
}

// ErrConnClosed is returned to a streaming handler whose client went away.
var ErrConnClosed = errors.New("h1: connection closed")

// errCloseAfterFlush closes a connection once its output batch is written.
var errCloseAfterFlush = errors.New("h1: close after response")

// Conn is the server side of one HTTP/1.x connection (httpmsg.Proto).
//
// Ownership: every field not marked otherwise is owned by the event loop. While busy
// is true a worker goroutine owns batch and the exchanges in it; it hands the bytes
// it produced back through the mu-guarded fields and a wake-up, and the loop takes
// batch back when done is set.
type Conn struct {
	c   httpmsg.Conn
	cfg *ServerConfig
	lim Limits

	parse Request        // scratch for the head being parsed
	cur   *exchange      // request whose body is being read
	chunk ChunkedDecoder // decoder of cur's chunked body

	batch    []*exchange // complete requests waiting for (or held by) a worker
	busy     bool        // a worker holds batch
	direct   bool        // the batch runs directly (submit; read by the batch's goroutine)
	task     batchTask
	inline   []byte // response bytes of inline handlers
	free     []*exchange
	kept     int  // the keptBytes of free's exchanges, summed
	closing  bool // a response carried Connection: close; read nothing more
	draining atomic.Bool

	upReq      *httpmsg.Request
	upSettings []byte
	// switchTo builds the protocol a 101 answer switched to (switch.go): set by
	// the handler's goroutine before the batch's final hand-off, read by the loop.
	switchTo func(httpmsg.Conn) httpmsg.Proto
	hijack   *hijackReq // guarded by mu: a worker's Hijack waiting for the loop

	vc ValidCache // response field checks; used by whoever holds the batch

	streamEx   *exchange // exchange whose body is being streamed to its handler
	served     bool      // a request head was parsed on this connection
	inputEnded bool      // the client's input ended (InputEnded): no h2c upgrade
	partial    int       // length of the incomplete head seen by the last ParseHead

	// Handed over by the worker; guarded by mu.
	mu      sync.Mutex
	ready   []byte // response bytes to write, in order
	done    bool   // the worker finished the batch
	spare   []byte // owned by the loop (OnWake), not mu: the previous ready buffer, for reuse
	closed  bool   // the connection closed (contexts created later start cancelled)
	eof     bool   // the client's input ended (contexts created later start cancelled)
	queued  int    // output the engine still held after its last write
	waiters int    // streaming handlers waiting in waitOutput
	outCond sync.Cond

	outbound func() int           // engine's unsent output (httpmsg.OutboundReporter; event loop only); nil if unknown
	dr       httpmsg.DirectRunner // the engine can run a batch on the loop's goroutine; nil if not
	outHeld  bool                 // event loop: parsing waits for the output to drain

	tls *tls.ConnectionState // the connection's TLS state (httpmsg.TLSConn); nil: plaintext
}

// NewConn returns the protocol state of a new HTTP/1.x connection.
func NewConn(c httpmsg.Conn, cfg *ServerConfig) *Conn {
	cn := &Conn{c: c, cfg: cfg, lim: cfg.Limits}
	cn.task.conn = cn
	cn.outCond.L = &cn.mu
	cn.outbound = httpmsg.Outbound(c)
	cn.tls = httpmsg.TLSState(c)
	cn.dr, _ = c.(httpmsg.DirectRunner)
	return cn
}

// Busy reports whether a worker is serving requests of this connection.
func (cn *Conn) Busy() bool { return cn.busy }

// InputEnded is told that the client's input ended (it half-closed, or closed) and
// reports whether answers are still owed: a worker serves requests of this
// connection. The engine then keeps the connection open to write them (see
// engine/detach.go). As with net/http, the requests' contexts are cancelled, since a
// client that closed looks the same as one that half-closed; answers are written all
// the same. While a handler still reads a streamed body, the contexts are cancelled
// only once that body ended (net/http does not watch the connection before the body
// is read either): the rest of the body may still be buffered. A body whose rest
// cannot come fails with ErrBodyAborted (feedPipe, AbortBody).
func (cn *Conn) InputEnded() bool {
	cn.inputEnded = true
	if cn.streamEx == nil {
		cn.cancelAtEOF()
	}
	return cn.busy
}

// cancelAtEOF cancels the contexts of the requests served, and makes those created
// later start cancelled (loop, after the input ended).
func (cn *Conn) cancelAtEOF() {
	cn.mu.Lock()
	cn.eof = true
	for _, ex := range cn.batch {
		if ex.cancel != nil {
			ex.cancel()
		}
	}
	cn.mu.Unlock()
}

// AbortBody ends a streamed request body whose rest can no longer arrive (the
// input ended first): the handler's read fails with ErrBodyAborted, and the
// connection closes after its answer.
func (cn *Conn) AbortBody() {
	if cn.streamEx != nil {
		cn.streamEx.pipe.abort(ErrBodyAborted)
		cn.streamEx = nil
		cn.closing = true
		cn.cancelAtEOF()
	}
}

// AwaitingBody reports whether a handler reads a streamed body that has not
// completely arrived (the engine then applies a progress timeout).
func (cn *Conn) AwaitingBody() bool { return cn.streamEx != nil }

// Drain makes the connection close after the responses in progress (graceful
// shutdown); an idle connection closes now.
func (cn *Conn) Drain() {
	cn.draining.Store(true)
	if !cn.busy && cn.cur == nil {
		cn.closing = true
		cn.c.Close()
	}
}

// TakeUpgrade returns the request that asked for h2c and its decoded settings.
func (cn *Conn) TakeUpgrade() (*httpmsg.Request, []byte) {
	r, s := cn.upReq, cn.upSettings
	cn.upReq, cn.upSettings = nil, nil
	return r, s
}

// OnClose cancels the contexts of requests in progress, aborts a streamed body,
// fails a worker's Hijack still waiting for the loop (ErrConnClosed) and
// releases the connection's buffers.
func (cn *Conn) OnClose(error) {
	cn.mu.Lock()
	cn.closed = true
	cn.outCond.Broadcast()
	if hj := cn.hijack; hj != nil {
		// A worker's Hijack the loop will never serve (the connection closed
		// after it asked): it must not wait for good, holding its worker.
		cn.hijack = nil
		hj.err = ErrConnClosed
		close(hj.done)
	}
	if cn.busy {
		for _, ex := range cn.batch {
			if ex.cancel != nil {
				ex.cancel()
			}
		}
	}
	cn.mu.Unlock()
	if cn.streamEx != nil {
		cn.streamEx.pipe.abort(ErrBodyAborted)
		cn.streamEx = nil
	}
	if !cn.busy {
		cn.release()
	}
}

// OnData parses and serves every complete request in in (pipelining), in order.
func (cn *Conn) OnData(in []byte) (int, error) {
	cn.outHeld = false
	if cn.busy {
		if cn.streamEx != nil {
			n := cn.feedPipe(in)
			if cn.streamEx == nil && cn.inputEnded {
				cn.cancelAtEOF() // the body ended after the input did
			}
			return n, nil
		}
		return 0, nil // pipelined requests wait until the worker hands the connection back
	}
	if cn.closing {
		return 0, nil
	}
	if cn.outbound != nil && cn.outbound() > outboundHigh {
		// The client reads slower than it asks: leave its requests in the engine's
		// buffer (which pauses reading once full) until the output drained.
		cn.outHeld = true
		return 0, nil
	}
	consumed := 0
	// Once a batch went to a worker (busy), the worker owns it: stop parsing; the
	// rest waits in the engine's buffer until the batch is handed back.
	for consumed < len(in) && !cn.closing && !cn.busy {
		if cn.cur != nil {
			n, complete, err := cn.readBody(in[consumed:])
			consumed += n
			if err != nil {
				return consumed, cn.fail(err)
			}
			if !complete {
				if ex := cn.cur; ex.inline && int64(len(ex.body)) > cn.streamThreshold() {
					cn.streamBuffered(ex)
					if cn.streamEx != nil {
						consumed += cn.feedPipe(in[consumed:])
					}
					return consumed, nil
				}
				break
			}
			ex := cn.cur
			cn.cur = nil
			cn.enqueue(ex)
			continue
		}
		if cn.partial != 0 && cn.skipReparse(in[consumed:]) { // partial: skipReparse's own first test, here to save the call
			break
		}
		n, err := ParseHead(in[consumed:], &cn.parse, &cn.lim)
		if err == ErrNeedMore {
			cn.partial = len(in) - consumed
			break
		}
		cn.partial = 0
		if err != nil {
			if len(cn.batch) > 0 {
				break // answer the earlier requests first; the error comes after them
			}
			return consumed, cn.refuseHead(in[consumed:], err)
		}
		cn.served = true
		r := &cn.parse
		hasBody := r.Chunked || r.ContentLength > 0
		mayStream := hasBody && (r.Chunked || r.Expect100 || r.ContentLength > cn.streamThreshold())
		if mayStream && len(cn.batch) > 0 {
			break // streamed bodies and interim responses must not overtake earlier answers
		}
		// After the client's input ended there is no HTTP/2 to switch to: the
		// request is answered over HTTP/1.1 (RFC 9110 §7.8 lets a server ignore
		// Upgrade).
		if r.UpgradeH2C && cn.cfg.EnableH2C && !hasBody && len(cn.batch) == 0 && !cn.inputEnded {
			return consumed + n, cn.upgrade(in[consumed:consumed+n], r)
		}
		ex := cn.newExchange(in[consumed:consumed+n], r)
		consumed += n
		ex.inline = cn.cfg.Handler.Prepare(&ex.msg)
		if ex.inline && r.ContentLength > cn.streamThreshold() {
			// A body too large to buffer streams, and reading it would block the
			// loop: the inline route's handler runs on a worker this time (a
			// chunked one once it grew past the threshold: streamBuffered).
			ex.inline = false
		}
		if mayStream && !ex.inline {
			return consumed + cn.dispatchStreamed(ex, r.Expect100, in[consumed:]), nil
		}
		if hasBody {
			if r.Expect100 {
				// RFC 9110 §10.1.1: the client waits for 100 before sending the body;
				// a buffered body is read at dispatch.
				cn.c.Write(Continue100)
			}
			cn.cur = ex
			cn.chunk.Reset()
			continue
		}
		cn.enqueue(ex)
		if r.Upgrade && !hasBody {
			// RFC 9110 §7.8: once answered with 101, the bytes after this request
			// belong to the new protocol: parse nothing more until it is answered.
			if cn.switchTo != nil {
				return consumed, httpmsg.ErrUpgrade // an inline handler switched
			}
			break
		}
	}
	if len(cn.batch) > 0 && !cn.busy {
		cn.submit()
	}
	return consumed, nil
}

// refuseHead answers a head that ParseHead refused (event loop) and returns the
// error that ends the connection. in starts at the refused head.
func (cn *Conn) refuseHead(in []byte, err error) error {
	if !cn.served && err != errMethodTooLong && err != errMethod && notHTTP(in) {
		// Not HTTP/1.x at all (e.g. an invalid HTTP/2 preface): an HTTP/1.1
		// error response means nothing to this peer; close (RFC 9112 §2.2
		// says SHOULD respond 400, RFC 9113 §3.4 wants the connection gone).
		// A method too long is refused before its request line ends, so
		// it always gets its 501 (RFC 9112 §3); a method that is not a
		// token makes the request line malformed, which gets its 400
		// (RFC 9112 §3: "method = token"; §2.2: a server that receives an
		// invalid request-line SHOULD respond with 400).
		cn.closing = true
		return err
	}
	return cn.fail(err)
}

// dispatchStreamed submits ex at once (event loop); its body follows through a
// pipe as it arrives, starting with what in holds after the head. It returns how
// many bytes of in the pipe took.
func (cn *Conn) dispatchStreamed(ex *exchange, expect100 bool, in []byte) int {
	ex.pipe = newPipe(cn, ex, expect100)
	ex.msg.BodyReader = ex.pipe
	cn.streamEx = ex
	cn.chunk.Reset()
	cn.batch = append(cn.batch, ex)
	cn.submit()
	if cn.streamEx != nil {
		return cn.feedPipe(in)
	}
	return 0
}

// skipReparse reports whether an incomplete head that grew a little still cannot
// be complete: ParseHead re-parses from the start, so calling it on every byte of
// a head sent one byte at a time would cost quadratic time (slowloris). The head is
// parsed again once it ends (a blank line arrived), grew by half, or passed the
// size limit.
func (cn *Conn) skipReparse(buf []byte) bool {
	p := cn.partial
	if p == 0 || len(buf) < p || len(buf) >= p+p/2 {
		return false
	}
	limit := cn.lim.MaxHeaderBytes
	if limit <= 0 {
		limit = DefaultMaxHeaderBytes
	}
	if len(buf) > limit {
		return false
	}
	tail := buf[max(0, p-3):]
	return !bytes.Contains(tail, []byte("\n\r\n")) && !bytes.Contains(tail, []byte("\n\n"))
}

// notHTTP reports whether the first line of buf is complete and has no HTTP
// version at all. A line that has not ended yet says nothing: a request-target
// refused as too long (414) is refused before its line ends, and an answer is
// owed to it (RFC 9112 §3: a server "MUST respond with a 414").
func notHTTP(buf []byte) bool {
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		return false
	}
	return !bytes.Contains(buf[:i], []byte(" HTTP/"))
}

func (cn *Conn) streamThreshold() int64 {
	if t := cn.cfg.StreamThreshold; t > 0 {
		return t
	}
	return 64 << 10
}

// fail answers a refused request and closes the connection.
func (cn *Conn) fail(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: 400, Reason: "bad request"}
	}
	cn.c.Write(cn.appendRefusal(nil, e))
	cn.closing = true
	return err
}

// appendRefusal appends the answer refusing a request for e, with the configured
// fields and body.
func (cn *Conn) appendRefusal(dst []byte, e *Error) []byte {
	fields := cn.refusalFields(e.Status)
	if f := cn.cfg.RefusalBody; f != nil {
		if ct, body := f(e.Status); ct != "" || body != nil {
			return AppendErrorBody(dst, e.Status, fields, ct, body)
		}
	}
	return AppendError(dst, e, fields)
}

// refusalFields returns the configured extra fields of an answer of this layer.
func (cn *Conn) refusalFields(status int) []httpmsg.Field {
	if f := cn.cfg.RefusalFields; f != nil {
		return f(status)
	}
	return nil
}

// streamBuffered turns the chunked body of an inline route's request, which grew
// past StreamThreshold while it was buffered, into a streamed one: what arrived so
// far goes into a pipe, and the handler runs on a worker (reading the rest would
// block the loop). Buffering it whole would hold up to MaxBodySize per connection.
// The batch is empty: a buffered body holds up the requests behind it.
func (cn *Conn) streamBuffered(ex *exchange) {
	cn.cur = nil
	ex.inline = false
	ex.pipe = newPipe(cn, ex, false) // a 100 Continue went out with the head
	ex.pipe.buf = append(ex.pipe.buf, ex.body...)
	ex.fed = int64(len(ex.body))
	ex.body = ex.body[:0]
	ex.msg.BodyReader = ex.pipe
	cn.streamEx = ex
	cn.batch = append(cn.batch, ex)
	cn.submit()
}

// readBody moves body bytes of cur out of in. It reports whether the body is complete.
func (cn *Conn) readBody(in []byte) (n int, complete bool, err error) {
	ex := cn.cur
	if !ex.chunked {
		need := int(ex.msg.ContentLength) - len(ex.body)
		n = min(need, len(in))
		ex.body = append(ex.body, in[:n]...)
		return n, len(ex.body) == int(ex.msg.ContentLength), nil
	}
	max := cn.lim.MaxBodySize
	if max <= 0 {
		max = DefaultMaxBodySize
	}
	n, ex.body, complete, err = cn.chunk.Decode(in, ex.body, max)
	if complete {
		ex.copyTrailers(cn.chunk.Trailers())
	}
	return n, complete, err
}
