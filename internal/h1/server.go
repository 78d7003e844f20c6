package h1

import (
	"bytes"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/celeris-dev/celeris/internal/bytesconv"
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
	spare   []byte // the loop's previous ready buffer, for reuse
	closed  bool   // the connection closed (contexts created later start cancelled)
	eof     bool   // the client's input ended (contexts created later start cancelled)
	queued  int    // output the engine still held after its last write
	waiters int    // streaming handlers waiting in waitOutput
	outCond sync.Cond

	outbound func() int           // engine's unsent output (httpmsg.OutboundReporter; event loop only); nil if unknown
	dr       httpmsg.DirectRunner // the engine can run a batch on the connection's goroutine; nil if not
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
		if cn.skipReparse(in[consumed:]) {
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
			if !cn.served && err != errMethodTooLong && err != errMethod && notHTTP(in[consumed:]) {
				// Not HTTP/1.x at all (e.g. an invalid HTTP/2 preface): an HTTP/1.1
				// error response means nothing to this peer; close (RFC 9112 §2.2
				// says SHOULD respond 400, RFC 9113 §3.4 wants the connection gone).
				// A method too long is refused before its request line ends, so
				// it always gets its 501 (RFC 9112 §3); a method that is not a
				// token makes the request line malformed, which gets its 400
				// (RFC 9112 §3: "method = token"; §2.2: a server that receives an
				// invalid request-line SHOULD respond with 400).
				cn.closing = true
				return consumed, err
			}
			return consumed, cn.fail(err)
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
			// Dispatch now; the body follows through a pipe as it arrives.
			ex.pipe = newPipe(cn, ex, r.Expect100)
			ex.msg.BodyReader = ex.pipe
			cn.streamEx = ex
			cn.chunk.Reset()
			cn.batch = append(cn.batch, ex)
			cn.submit()
			if cn.streamEx != nil {
				consumed += cn.feedPipe(in[consumed:])
			}
			return consumed, nil
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

// notHTTP reports whether the first line of buf has no HTTP version at all.
func notHTTP(buf []byte) bool {
	line := buf
	if i := bytes.IndexByte(buf, '\n'); i >= 0 {
		line = buf[:i]
	}
	return !bytes.Contains(line, []byte(" HTTP/"))
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

// enqueue runs a complete, routed request inline or adds it to the batch.
func (cn *Conn) enqueue(ex *exchange) {
	ex.msg.Body = ex.body
	if len(ex.body) > 0 || ex.chunked {
		ex.msg.ContentLength = int64(len(ex.body))
	}
	if ex.draining() {
		ex.keepAlive = false
	}
	if ex.inline && len(cn.batch) == 0 && !cn.busy {
		ex.out = &cn.inline
		ex.serve(cn.cfg.Handler)
		cn.inline = httpmsg.WriteOwned(cn.c, cn.inline)
		if !ex.keepAlive {
			cn.closing = true
			cn.c.Close()
		}
		cn.put(ex)
		return
	}
	cn.batch = append(cn.batch, ex)
	if !ex.keepAlive {
		cn.closing = true // nothing after a request that closes the connection
	}
	max := cn.cfg.MaxBatch
	if max <= 0 {
		max = 16
	}
	if len(cn.batch) >= max && !cn.busy {
		cn.submit()
	}
}

// submit hands the batch to a worker, or to the connection's own goroutine where
// the engine has one (DirectRunner): there the batch runs as on a worker, and
// moves off the loop's goroutine (needLoop) when it needs the loop. A batch whose
// body streams in needs the loop from the start: it goes to the pool.
func (cn *Conn) submit() {
	cn.busy = true
	if cn.dr != nil && cn.streamEx == nil && cn.dr.RunDirect(&cn.task) {
		return
	}
	if cn.cfg.Pool == nil || !cn.cfg.Pool.Submit(&cn.task) {
		// No worker available: refuse rather than block the loop.
		for _, ex := range cn.batch {
			ex.out = &cn.inline
			ex.keepAlive = false
			ct, body := "text/plain; charset=utf-8", []byte("server busy")
			if f := cn.cfg.RefusalBody; f != nil {
				if t, b := f(503); t != "" || b != nil {
					ct, body = t, b
				}
			}
			_ = ex.WriteResponse(503, append([]httpmsg.Field{{Name: "Content-Type", Value: ct}}, cn.refusalFields(503)...), body)
		}
		cn.c.Write(cn.inline)
		cn.inline = cn.inline[:0]
		cn.finishBatch()
		cn.closing = true
		cn.c.Close()
	}
}

// OnWake writes what the worker handed back and, when it finished, takes the
// connection back so that OnData can parse pipelined requests that waited.
func (cn *Conn) OnWake() error {
	cn.mu.Lock()
	ready, done := cn.ready, cn.done
	cn.ready, cn.done = cn.spare[:0], false
	hj := cn.hijack
	cn.hijack = nil
	cn.mu.Unlock()
	if hj != nil {
		return cn.takeHijack(hj, ready)
	}
	if len(ready) > 0 {
		// The engine may keep the worker's buffer (a large body is not copied
		// again) and give another back: that one becomes the spare.
		ready = httpmsg.WriteOwned(cn.c, ready)
	}
	cn.mu.Lock()
	if cap(ready) <= 1<<20 {
		cn.spare = ready[:0]
	} else {
		cn.spare = nil
	}
	cn.mu.Unlock()
	if !done {
		return nil
	}
	closeNow := cn.finishBatch()
	if cn.switchTo != nil {
		return httpmsg.ErrUpgrade // the engine takes the new protocol (TakeSwitch)
	}
	if closeNow || cn.closing || (cn.draining.Load() && cn.cur == nil) {
		cn.closing = true
		return errCloseAfterFlush
	}
	return nil
}

// finishBatch recycles the finished batch; it reports whether a response closed
// the connection.
func (cn *Conn) finishBatch() (closeConn bool) {
	if cn.streamEx != nil {
		// The handler returned before its body was complete: the rest of the body
		// cannot be told apart from the next request without reading it; close.
		cn.streamEx.pipe.abort(ErrBodyAborted)
		cn.streamEx = nil
		closeConn = true
	}
	for i, ex := range cn.batch {
		if !ex.keepAlive {
			closeConn = true
		}
		cn.put(ex)
		cn.batch[i] = nil
	}
	cn.batch = cn.batch[:0]
	cn.busy = false
	return closeConn
}

// handOff moves bytes produced on a worker to the loop. done marks the batch finished.
func (cn *Conn) handOff(b *[]byte, done bool) error {
	if !done {
		cn.needLoop() // the bytes go out now, and waitOutput waits for the loop
	}
	cn.mu.Lock()
	if cn.closed {
		// Nobody will write these bytes: drop them, and tell a streaming handler.
		*b = (*b)[:0]
		cn.mu.Unlock()
		return ErrConnClosed
	}
	if len(cn.ready) == 0 {
		cn.ready, *b = *b, cn.ready[:0]
	} else {
		cn.ready = append(cn.ready, *b...)
		*b = (*b)[:0]
	}
	if done {
		if cap(*b) > 1<<20 {
			*b = nil // do not pin a large buffer to the connection
		}
		cn.done = true
	}
	cn.mu.Unlock()
	cn.c.Wake()
	if !done {
		cn.waitOutput()
	}
	return nil
}

// needLoop makes sure the loop runs beside the handler's goroutine, which is about
// to wait for it or to hand it output before the batch ends (worker side): a batch
// running on the connection's own goroutine (DirectRunner) detaches from it.
func (cn *Conn) needLoop() {
	if cn.dr != nil {
		cn.dr.Detach()
	}
}

// outboundHigh is the output bound of a connection: the output not yet taken by
// the socket (queued in the engine, or handed to the loop and not yet written)
// above which a connection stops parsing requests and streaming handlers wait,
// until it drained below half of it. Smaller is also faster for a client that
// reads at once: the demo's 64 MiB /download to curl over loopback went at
// 1.3-3.0 GB/s with 512 KiB and at 0.44-0.76 GB/s with 1 MiB (2-vCPU VM shared
// with other work, 2026-11-28), the output staying in the CPU's caches.
const outboundHigh = 512 << 10

// waitOutput blocks a streaming handler while the connection's unsent output (what
// the engine held after its last write and what waits in ready) is above
// outboundHigh (worker side). The loop reports the engine's level after every
// flush.
func (cn *Conn) waitOutput() {
	if cn.outbound == nil {
		return
	}
	cn.mu.Lock()
	for cn.queued+len(cn.ready) > outboundHigh && !cn.closed {
		cn.waiters++
		if cn.waiters == 1 {
			// The loop may have asked DrainLevel before this wait began: wake it
			// so that it arms its drain watch for this level.
			cn.c.Wake()
		}
		cn.outCond.Wait()
		cn.waiters--
	}
	cn.mu.Unlock()
}

// DrainLevel is the engine output level the connection waits for (event loop,
// engine's drain watch): half of outboundHigh while a streaming handler waits,
// outboundHigh while parsing waits, else -1.
func (cn *Conn) DrainLevel() int {
	cn.mu.Lock()
	w := cn.waiters
	cn.mu.Unlock()
	switch {
	case w > 0:
		return outboundHigh / 2
	case cn.outHeld:
		return outboundHigh
	}
	return -1
}

// AfterFlush records how much output the engine still holds (event loop, after each
// write) and releases waiting streaming handlers once it drained below half.
func (cn *Conn) AfterFlush(outbound int) {
	cn.mu.Lock()
	cn.queued = outbound
	if outbound <= outboundHigh/2 {
		cn.outCond.Broadcast()
	}
	cn.mu.Unlock()
}

// upgrade answers 101 and prepares the h2c hand-over (RFC 7540 §3.2).
func (cn *Conn) upgrade(head []byte, r *Request) error {
	settings, err := base64.RawURLEncoding.DecodeString(trimPadding(bytesconv.B2S(r.HTTP2Settings)))
	if err != nil {
		return cn.fail(&Error{Status: 400, Reason: "invalid HTTP2-Settings"})
	}
	ex := &exchange{conn: cn}
	ex.fill(head, r)
	cn.upReq, cn.upSettings = &ex.msg, settings
	cn.c.Write(switching101)
	return httpmsg.ErrUpgrade
}

func trimPadding(s string) string {
	for len(s) > 0 && s[len(s)-1] == '=' {
		s = s[:len(s)-1]
	}
	return s
}

var switching101 = []byte("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")

// newExchange takes an exchange from the free list and fills it from the parsed head.
func (cn *Conn) newExchange(head []byte, r *Request) *exchange {
	var ex *exchange
	if n := len(cn.free); n > 0 {
		ex = cn.free[n-1]
		cn.free[n-1] = nil
		cn.free = cn.free[:n-1]
		cn.kept -= ex.keptBytes()
	} else {
		ex = &exchange{conn: cn}
	}
	ex.fill(head, r)
	return ex
}

// put returns ex to the free list (bounded), dropping large buffers.
func (cn *Conn) put(ex *exchange) {
	ex.release()
	if len(cn.free) >= maxFree {
		return
	}
	// An idle keep-alive connection must not pin much memory: the buffers its free
	// exchanges keep are bounded in total (a burst of large pipelined bodies would
	// otherwise stay allocated for as long as the client keeps the connection).
	k := ex.keptBytes()
	if cn.kept+k > maxKeptBytes {
		ex.dropBuffers()
		k = 0
	}
	cn.kept += k
	cn.free = append(cn.free, ex)
}

// handOffEarly: a worker hands a batch's output over before the batch ends once it
// holds this much.
const handOffEarly = 256 << 10

// maxKeptBytes bounds the buffer capacity a connection's free exchanges keep.
const maxKeptBytes = 64 << 10

func (cn *Conn) release() {
	cn.free, cn.kept = nil, 0
	cn.batch = nil
	cn.cur = nil
	cn.inline = nil
}

// batchTask runs a connection's batch on a worker, in order.
type batchTask struct {
	conn *Conn
	buf  []byte // owned by the worker while it runs
}

// Run serves each exchange of the batch and hands the bytes back once.
func (t *batchTask) Run() {
	cn := t.conn
	g, n := cn.cfg.Active, int64(len(cn.batch))
	if g != nil {
		g.Add(n)
	}
	for i, ex := range cn.batch {
		ex.out = &t.buf
		ex.msg.Counted = g != nil
		ex.serve(cn.cfg.Handler)
		if !ex.keepAlive {
			break
		}
		if len(t.buf) > handOffEarly && i < len(cn.batch)-1 {
			// Large answers: pass them on (and wait while the client is slow)
			// instead of holding a whole batch of them.
			_ = cn.handOff(&t.buf, false)
		}
	}
	if g != nil {
		g.Add(-n) // before the answers go out: a client that has them sees it
	}
	// After this hand-off the loop may submit this task again at once: Run must not
	// touch t afterwards.
	_ = cn.handOff(&t.buf, true)
}

// maxFree bounds the per-connection free list of exchanges: a full pipelined batch
// (MaxBatch, 16 by default) plus the ones being read, reused without allocating.
const maxFree = 32
