package h2

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/poison"
)

// stream is one request/response exchange (RFC 9113 §5.1). Streams are recycled
// through the connection's free list once closed and their handler returned.
type stream struct {
	c       *Conn
	id      uint32
	counted bool // counted in Config.StreamGauge (event loop)

	// Owned by the event loop. req is read by the handler between dispatch and the
	// end of Serve; the loop then only writes req.Trailer (before the body reader
	// reports io.EOF).
	req        httpmsg.Request
	remoteDone bool // END_STREAM received: half-closed (remote)
	localDone  bool // END_STREAM or RST_STREAM sent: half-closed (local)
	closed     bool // gone from c.streams
	free       bool // on c.free (then closed is set too)
	inline     bool // set before Serve, read-only while it runs
	tunnel     bool // an extended CONNECT (RFC 8441): DATA is a byte stream, not a bounded body
	isHead     bool // set before Serve, read-only while it runs
	noBody     bool // the response carries no DATA (HEAD, 1xx, 204, 304)
	buffering  bool // inline route waiting for its body in body
	draining   bool // answered, handler returned: the rest of the body is discarded
	discarded  int64
	running    bool // a worker handler (or one in place, direct.go) has not returned
	inPlace    bool // its handler runs in place and owns the loop's state (direct.go); guarded by c.mu
	waiting    bool // in c.waiting
	inSendq    bool // in c.sendq
	hdrSent    bool // response HEADERS written
	declLen    int64
	received   int64
	recvWindow int64 // receive window the peer may still use on this stream
	recvCredit int64 // released receive bytes not yet granted back
	sendWindow int64
	body       []byte // buffered body of an inline route
	reader     bodyReader
	// ctx is the request context, nil until the handler asks (stream.Context);
	// set under c.mu, loaded anywhere. Never recycled with the stream: dropped at
	// recycle.
	ctx atomic.Pointer[reqCtx]

	// sh is shared with the handler goroutine, guarded by c.mu.
	sh   shared
	cond sync.Cond // L is &c.mu; signals readers and writers waiting on sh
}

// shared is the part of a stream that a worker handler and the loop both touch.
// Every field is guarded by Conn.mu.
type shared struct {
	// Response, handler -> loop.
	status   int      // 0 until the response starts
	hdr      fieldBuf // response fields waiting to be encoded
	hdrReady bool     // status and hdr wait for the loop
	length   int64    // content-length of a complete response, -1 when streamed
	data     []byte   // body bytes not yet framed: data[rd:]
	rd       int
	ended    bool // the handler finished its response
	trailer  fieldBuf
	hasTrl   bool
	done     bool          // Serve returned
	inReady  bool          // in c.ready
	dead     bool          // stream closed or connection gone: handler I/O fails
	blocked  bool          // a writer waits for data to drain
	interim  []interimHead // 1xx responses waiting for the loop (informational.go)
	sized    bool          // a streamed response of known length (sized.go)
	whole    bool          // a complete response (WriteResponse): framed once Serve returned
	owed     int64         // body bytes a sized response still owes

	// Request body, loop -> handler.
	in       []byte // unread body bytes: in[inRd:]
	inRd     int
	inEOF    bool
	inErr    error
	readWait bool  // a reader waits for bytes
	inClosed bool  // the handler closed the body: arriving bytes are dropped
	consumed int64 // bytes read by the handler, not yet credited by the loop
}

// fieldBuf holds copies of header fields handed over by a handler. The strings in
// fields alias buf; they are valid until reset and never given to the HPACK encoder
// without interning (its table keeps strings).
type fieldBuf struct {
	buf    []byte
	fields []httpmsg.Field
}

const maxFree = 64 // streams kept per connection for reuse

func (c *Conn) newStream(id uint32) *stream {
	var s *stream
	if n := len(c.free); n > 0 {
		s = c.free[n-1]
		c.free[n-1] = nil
		c.free = c.free[:n-1]
		if s.req.Spare != nil {
			c.spares-- // Prepare takes it
		}
	} else {
		s = &stream{c: c}
		s.cond.L = &c.mu
		s.reader.s = s
	}
	s.id = id
	s.closed, s.free = false, false
	s.declLen = -1
	s.recvWindow = int64(c.cfg.InitialWindowSize)
	s.sendWindow = c.peerInitWindow
	s.sh.length = -1
	r := &s.req
	r.KeepsSpare = true // the stream is recycled per connection (maybeRecycle)
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/2.0", 2, 0
	r.StreamID = id
	r.RemoteAddr = c.remote
	r.TLS = c.tls
	r.ContentLength = -1
	// The request context is made on demand by s.Context (context.go).
	return s
}

// recycle resets s for reuse once nothing refers to it any more.
func (c *Conn) maybeRecycle(s *stream) {
	if !s.closed || s.free || s.running || s.waiting || s.inSendq || c.phase == phaseClosed {
		return
	}
	inReady := false
	if !s.inline { // an inline stream is never on the ready list (writer.go)
		c.mu.Lock()
		inReady = s.sh.inReady
		c.mu.Unlock()
	}
	if inReady || len(c.free) >= maxFree {
		c.dropSpare(s) // s is dropped: its Context goes back to the pool
		return
	}
	spare := s.req.Spare
	s.req.Reset()
	if spare != nil {
		if c.spares < maxSpares {
			s.req.Spare = spare
			c.spares++
		} else {
			spare.Recycle()
		}
	}
	poison.Fill(s.body) // race builds: a body kept past its handler reads garbage
	body := s.body[:0]
	if cap(body) > 64<<10 {
		body = nil
	}
	sh := &s.sh
	data, in := sh.data[:0], sh.in[:0]
	if cap(data) > 64<<10 {
		data = nil
	}
	if cap(in) > keptBodyBuf {
		putBodyBuf(in)
		in = nil
	}
	sh.status = 0
	if len(sh.hdr.buf) > 0 || len(sh.hdr.fields) > 0 {
		sh.hdr = sh.hdr.reset()
	}
	sh.hdrReady, sh.length = false, 0
	sh.data, sh.rd, sh.ended = data, 0, false
	if len(sh.trailer.buf) > 0 || len(sh.trailer.fields) > 0 {
		sh.trailer = sh.trailer.reset()
	}
	sh.hasTrl, sh.done, sh.inReady, sh.dead, sh.blocked = false, false, false, false, false
	sh.sized, sh.owed, sh.whole = false, 0, false
	sh.in, sh.inRd, sh.inEOF, sh.inErr = in, 0, false, nil
	sh.readWait, sh.consumed, sh.inClosed = false, 0, false
	sh.interim = nil // rare: not worth keeping
	// A stream on the free list stays "closed", so a stale reference is inert.
	// Its request context (cancelled by now) is dropped, never reused: user code
	// may still hold it (context.go). Every other field is reset one by one
	// (cheaper than assigning the whole struct); TestRecycleResetsEveryField
	// fails when a field is added without being reset here.
	s.id, s.counted = 0, false
	s.remoteDone, s.localDone = false, false
	s.closed, s.free = true, true
	s.inline, s.isHead, s.noBody, s.buffering, s.draining, s.tunnel = false, false, false, false, false, false
	s.discarded = 0
	s.running, s.waiting, s.inSendq, s.hdrSent, s.inPlace = false, false, false, false, false
	s.declLen, s.received = 0, 0
	s.recvWindow, s.recvCredit, s.sendWindow = 0, 0, 0
	s.body = body
	if s.ctx.Load() != nil {
		s.ctx.Store(nil)
	}
	c.free = append(c.free, s)
}

// maxSpares bounds the free streams of a connection that keep their request's
// Context (httpmsg.Request.Spare) for the next request, about 1 KB each. A client
// that keeps n streams in flight reuses n free streams: with a Context each, a
// handler on a worker takes no sync.Pool round trip (with many streams in
// flight the pool's per-P slot is taken, and Get and Put go to its shared
// queues: about 130 instructions a request, h2load -m32).
const maxSpares = 32

// dropSpare recycles the Context a stream kept, when the stream itself is not
// reused (loop only).
func (c *Conn) dropSpare(s *stream) {
	if sp := s.req.Spare; sp != nil {
		s.req.Spare = nil
		sp.Recycle()
	}
}

func (b *fieldBuf) reset() fieldBuf {
	if cap(b.buf) > 16<<10 {
		return fieldBuf{}
	}
	httpmsg.ClearFields(b.fields)
	return fieldBuf{buf: b.buf[:0], fields: b.fields[:0]}
}

// add copies f into the buffer. Both slices grow once, before the copy: the
// strings then alias the buffer they are copied into (a buffer that grows
// later leaves them in the old one, which they keep alive).
func (b *fieldBuf) add(fields []httpmsg.Field) {
	n := 0
	for i := range fields {
		n += len(fields[i].Name) + len(fields[i].Value)
	}
	b.buf = slices.Grow(b.buf, n)
	b.fields = slices.Grow(b.fields, len(fields))
	for i := range fields {
		f := &fields[i]
		off := len(b.buf)
		b.buf = append(b.buf, f.Name...)
		mid := len(b.buf)
		b.buf = append(b.buf, f.Value...)
		b.fields = append(b.fields, httpmsg.Field{
			Name:  bytesconv.B2S(b.buf[off:mid]),
			Value: bytesconv.B2S(b.buf[mid:]),
		})
	}
}

// dispatch runs the handler of a request whose head (and, inline, body) is
// complete.
func (c *Conn) dispatch(s *stream) {
	if s.inline {
		c.h.Serve(&s.req, s)
		if s.req.MoveToWorker {
			// The handler's answer would wait for the client (a large body, a
			// file: httpmsg.LoopWriter): nothing of it was written, so the
			// stream becomes a worker's, whose writes wait within maxQueued, and
			// Serve runs again there to write it.
			s.inline = false
			c.dispatch(s)
			return
		}
		s.ctx.Load().cancel() // Serve returned
		c.handlerReturned(s)
		return
	}
	if c.handlers >= c.cfg.MaxHandlersPerConn {
		// CVE-2023-44487 (rapid reset): handlers per connection are bounded; the
		// request waits on the loop for a slot.
		s.waiting = true
		c.waiting = append(c.waiting, s)
		return
	}
	if c.runInPlace(s) {
		return
	}
	c.startWorker(s)
}

// startWorker submits s's handler to the pool. c.handlers counts it until it
// returns (service), whatever becomes of its stream: the handler of a stream
// reset by either side may run on, and still holds its slot, so no more than
// MaxHandlersPerConn (at most MaxConcurrentStreams) handlers of one connection
// ever run at once (CVE-2023-44487, CVE-2025-8671).
func (c *Conn) startWorker(s *stream) {
	s.running = true
	c.handlers++
	c.submit(s)
}

// submit hands s, counted as running, to the pool.
func (c *Conn) submit(s *stream) {
	if !c.pool.Submit(s) {
		// The pool is stopped or full: answer 503 as if a handler had.
		s.running = false
		c.handlers--
		c.mu.Lock()
		s.sh.done = true
		c.mu.Unlock()
		s.req.DropMoved()
		c.respondRefusal(s, 503)
		c.maybeFinish(s)
	}
}

// Run is the work.Task of a worker handler.
func (s *stream) Run() {
	c := s.c
	defer func() {
		c.mu.Lock()
		s.sh.done = true
		ctx := s.ctx.Load()
		wake := c.notifyLocked(s)
		c.mu.Unlock()
		ctx.cancel() // Serve returned
		if wake {
			c.nc.Wake()
		}
	}()
	c.h.Serve(&s.req, s)
}

// startWaiting gives free handler slots to waiting requests, in arrival order.
func (c *Conn) startWaiting() {
	i := 0
	for ; i < len(c.waiting) && c.handlers < c.cfg.MaxHandlersPerConn; i++ {
		s := c.waiting[i]
		c.waiting[i] = nil
		s.waiting = false
		if s.closed {
			c.maybeRecycle(s)
			continue
		}
		c.startWorker(s)
	}
	if i > 0 {
		n := copy(c.waiting, c.waiting[i:])
		clear(c.waiting[n:])
		c.waiting = c.waiting[:n]
	}
}

// handlerReturned finishes a stream whose handler (inline or worker) returned: a
// handler that never answered gets 500, one that left a streamed response open
// gets RST_STREAM INTERNAL_ERROR.
func (c *Conn) handlerReturned(s *stream) {
	if !s.closed {
		var status int
		var ended bool
		if s.inline { // s.sh is the loop's (writer.go)
			status, ended = s.sh.status, s.sh.ended
		} else {
			c.mu.Lock()
			status, ended = s.sh.status, s.sh.ended
			c.mu.Unlock()
		}
		switch {
		case status == 0:
			c.respondError(s, 500, nil) // the handler (and its middleware) ran
		case !ended:
			c.resetStream(s, frame.ErrCodeInternal)
		}
	}
	c.maybeFinish(s)
}

// maybeFinish closes s when both sides are done. A response finished before the
// request body ended asks the client to stop sending (RFC 9113 §8.1: RST_STREAM
// NO_ERROR) once the handler returned.
func (c *Conn) maybeFinish(s *stream) {
	if s.closed {
		c.maybeRecycle(s)
		return
	}
	if !s.localDone {
		return
	}
	if s.remoteDone {
		c.closeStream(s, closedNormally)
		return
	}
	if !s.running && !s.buffering && !s.draining {
		c.mu.Lock()
		done := s.sh.done || s.inline
		refused := s.sh.inErr == ErrBodyTooLarge
		c.mu.Unlock()
		if done && refused {
			c.resetStream(s, frame.ErrCodeNo) // the body was refused: stop sending it
			return
		}
		if done {
			// The response is complete and the handler gone while the client still
			// sends its body: the stream stays half-closed (local), discarding what
			// arrives (still validating frames) until END_STREAM; more than
			// maxDiscard bytes get RST_STREAM NO_ERROR (RFC 9113 §8.1). A draining
			// stream does not keep the connection busy.
			s.draining = true
			c.draining++
		}
	}
}

// maxDiscard is how much request body a draining stream discards before asking
// the client to stop with RST_STREAM NO_ERROR.
const maxDiscard = 64 << 10

// closeStream moves s to "closed": it leaves the stream map, and the handler's
// pending I/O fails.
func (c *Conn) closeStream(s *stream, how closeHow) {
	if s.closed {
		return
	}
	s.closed = true
	c.streams.del(s.id)
	c.uncount(s)
	if s.waiting {
		// CVE-2025-8671 (MadeYouReset), CVE-2023-44487: a stream closed before a
		// handler slot freed up never runs, and leaves the queue now, so the queue
		// holds open streams only (at most MaxConcurrentStreams) however many
		// streams are reset while every slot is taken by a handler that does not
		// return.
		s.waiting = false
		if i := slices.Index(c.waiting, s); i >= 0 {
			c.waiting = slices.Delete(c.waiting, i, i+1)
		}
		s.req.DropMoved() // an inline route's moved response that never runs
	}
	if s.draining {
		s.draining = false
		c.draining--
	}
	c.closedRing[c.ringPos] = closedID{id: s.id, how: how}
	c.ringPos = (c.ringPos + 1) % len(c.closedRing)
	if how == closedNormally {
		c.defenses.completed++
	}
	c.mu.Lock()
	var unread int64
	if how != closedNormally {
		// Unread body bytes will never be read: give their window back.
		unread = int64(len(s.sh.in)-s.sh.inRd) + s.sh.consumed
		s.sh.in, s.sh.inRd, s.sh.consumed = s.sh.in[:0], 0, 0
	}
	s.sh.dead = true
	if s.sh.inErr == nil && !s.sh.inEOF {
		s.sh.inErr = ErrStreamClosed
	}
	s.sh.data, s.sh.rd = s.sh.data[:0], 0
	if s.sh.readWait || s.sh.blocked {
		// Only a worker's reader (readWait) or writer (blocked) waits on cond,
		// and each sets its flag before it waits; whoever clears a flag
		// broadcasts. Most streams have nobody waiting: no notifyList call.
		s.cond.Broadcast()
	}
	ctx := s.ctx.Load()
	c.mu.Unlock()
	// The exchange is over, whether completed or reset: work for it may stop.
	ctx.cancel()
	c.recvCredit += unread
	if s.buffering {
		s.buffering = false
	}
	c.maybeRecycle(s)
}

// resetStream sends RST_STREAM for s and closes it.
func (c *Conn) resetStream(s *stream, code frame.ErrCode) {
	if s.closed {
		return
	}
	s.localDone = true
	c.out = frame.AppendRSTStream(c.out, s.id, code)
	c.closeStream(s, closedByUs)
}

// resetStreamID answers a stream error on id, open or not. It returns the
// connection error of an exceeded reset budget (resetForPeer).
func (c *Conn) resetStreamID(id uint32, code frame.ErrCode) error {
	if s := c.streams.get(id); s != nil {
		return c.resetForPeer(s, code)
	}
	c.out = frame.AppendRSTStream(c.out, id, code)
	c.remember(id, closedByUs)
	return nil
}

// resetForPeer resets s because of what the peer sent: a stream error, a
// malformed request, a body over its limit.
//
// CVE-2025-8671 (MadeYouReset): frames a client may legally send can make the
// server reset a stream it just opened (WINDOW_UPDATE with increment 0 or
// overflowing the stream window, HEADERS or DATA on a half-closed (remote)
// stream, DATA beyond the stream window, a malformed request), abandoning its
// handler as a client's RST_STREAM would, without the client ever sending one.
// Such a reset of an unfinished response therefore counts against the same
// budget as a client's (defenses.reset), and the handler it abandons keeps its
// slot until it returns (Conn.handlers). It returns the connection error
// (ENHANCE_YOUR_CALM) when the budget is exceeded.
func (c *Conn) resetForPeer(s *stream, code frame.ErrCode) error {
	if s.closed {
		return nil
	}
	unfinished := !s.localDone
	c.resetStream(s, code)
	if unfinished {
		return c.defenses.reset(c)
	}
	return nil
}

func (c *Conn) remember(id uint32, how closeHow) {
	for i := range c.closedRing {
		if c.closedRing[i].id == id {
			c.closedRing[i].how = how
			return
		}
	}
	c.closedRing[c.ringPos] = closedID{id: id, how: how}
	c.ringPos = (c.ringPos + 1) % len(c.closedRing)
}

// closedHow reports how a recently closed stream closed, or 0 when unknown.
func (c *Conn) closedHow(id uint32) closeHow {
	for _, e := range c.closedRing {
		if e.id == id {
			return e.how
		}
	}
	return 0
}

// abortStreams fails every stream's pending handler I/O (connection error or
// close).
func (c *Conn) abortStreams() {
	for s := range c.streams.all() {
		c.uncount(s)
	}
	c.mu.Lock()
	for s := range c.streams.all() {
		s.sh.dead = true
		if s.sh.inErr == nil {
			s.sh.inErr = ErrStreamClosed
		}
		s.cond.Broadcast()
		// Streams whose handler still runs after they closed had their context
		// cancelled then (closeStream).
		s.ctx.Load().cancel()
	}
	c.mu.Unlock()
	for _, s := range c.waiting {
		s.waiting = false
		s.req.DropMoved()
	}
	c.waiting = nil
}

// count and uncount keep Config.StreamGauge, the server-wide count of open
// streams, once per stream.
func (c *Conn) count(s *stream) {
	if g := c.cfg.StreamGauge; g != nil && !s.counted {
		s.counted = true
		g.Add(1)
	}
}

func (c *Conn) uncount(s *stream) {
	if g := c.cfg.StreamGauge; g != nil && s.counted {
		s.counted = false
		g.Add(-1)
	}
}
