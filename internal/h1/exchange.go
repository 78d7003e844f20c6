package h1

import (
	"context"
	"errors"
	"slices"

	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/poison"
)

// Errors returned to handlers by the ResponseWriter.
var (
	ErrAnswered   = errors.New("h1: response already written")
	ErrNotStarted = errors.New("h1: streamed response not started")
)

// exchange is one request and its response. It owns a copy of the request head
// (raw) and body, so the request stays valid on a worker after the loop returns;
// every string in msg points into raw, body or trail and is valid until the
// exchange is recycled, right after Serve returns.
type exchange struct {
	// The fields a request touches come first and hdr last, so that they share as
	// few cache lines as they can: a pipelined batch in safe mode keeps many
	// exchanges in flight, and each is cold again when the next phase reaches it.
	conn *Conn
	msg  httpmsg.Request

	chunked   bool
	keepAlive bool
	http10    bool
	isHead    bool
	answered  bool // a response (complete or streamed) was started
	streaming bool // WriteHeader was called
	ended     bool // the streamed response was ended
	discard   bool // a streamed response without content (HEAD, 204, 304)
	raw10     bool // a close-delimited streamed response (HTTP/1.0)
	inline    bool // the route runs on the event loop
	hasBody   bool // msg.ContentLength != 0 (body and trail may grow), kept on this line
	upgrade   bool // the request asked to switch protocols (Request.Upgrade)
	sized     bool // a streamed response of known length (sized.go)

	// release touches two cache lines: the one holding msg.Route and the flags
	// above, and the next one, which starts at pipe (offsets 256 and 320; an
	// exchange is 64-byte aligned, its size class being a multiple of 64).
	out    *[]byte            // where response bytes go: the loop's inline buffer or the worker's
	pipe   *bodyPipe          // streamed request body, nil when buffered
	cancel context.CancelFunc // guarded by conn.mu
	raw    []byte             // copy of the request head
	kept   int                // cap of body and trail when last released
	fed    int64              // body bytes moved into pipe (event loop)
	remain int64              // body bytes a sized response still owes (sized.go)

	ctx   context.Context // created lazily by Context; guarded by conn.mu
	body  []byte          // request body
	trail []byte          // trailer bytes of a chunked body

	hdr [inlineFields]httpmsg.Field
}

// fill copies the head and points msg's strings into the copy. r (the parser's,
// over the engine's buffer) is only read: its views are translated into the copy
// as they are taken.
func (ex *exchange) fill(head []byte, r *Request) {
	ex.clear()
	ex.raw = append(ex.raw[:0], head...)
	raw := ex.raw
	m := &ex.msg
	m.Method = headView(r.Method, head, raw)
	m.Path = headView(r.Path, head, raw)
	m.RawQuery = headView(r.Query, head, raw)
	m.RequestURI = headView(r.URI, head, raw)
	if r.Minor == 0 {
		m.Proto, m.ProtoMinor = "HTTP/1.0", 0
	} else {
		m.Proto, m.ProtoMinor = "HTTP/1.1", 1
	}
	m.ProtoMajor = 1
	m.Host = headView(r.Host, head, raw)
	m.Scheme = "http"
	if m.TLS = ex.conn.tls; m.TLS != nil {
		m.Scheme = "https"
	}
	if m.Header == nil {
		m.Header = ex.hdr[:0]
	}
	for i := range r.Headers {
		f := &r.Headers[i]
		m.Header = append(m.Header, httpmsg.Field{Name: headView(f.Name, head, raw), Value: headView(f.Value, head, raw)})
	}
	m.ContentLength = r.ContentLength
	if r.ContentLength < 0 && !r.Chunked {
		m.ContentLength = 0
	}
	if r.Chunked {
		m.ContentLength = -1
	}
	m.RemoteAddr = ex.conn.c.RemoteAddr()
	m.Close = !r.KeepAlive
	ex.hasBody = m.ContentLength != 0
	ex.chunked = r.Chunked
	ex.keepAlive = r.KeepAlive
	ex.http10 = r.Minor == 0
	ex.isHead = m.Method == "HEAD"
	ex.upgrade = r.Upgrade
}

// validCache returns the connection's ValidCache. One per connection, not per
// exchange: a connection's responses are written one after the other by whoever
// holds its batch (the worker, or the loop for inline routes), and a pipelined
// batch cycles through many exchanges whose caches would each be cold.
func (ex *exchange) validCache() *ValidCache { return &ex.conn.vc }

// headView returns s, a slice of old, as a string over the same bytes of new (a
// copy of old): the translation of Request.Rebase, view by view.
func headView(s, old, new []byte) string { return bytesconv.B2S(rebase(s, old, new)) }

// release ends ex's use when it goes back to the free list: it cancels the request's
// context, drops what could keep memory alive (a body pipe, a handler's context,
// buffers larger than worth keeping) and leaves the rest to clear, which the next
// fill runs. The split keeps the cache lines this touches few: in safe mode the
// exchanges of a pipelined batch are cold again by the time they are recycled.
func (ex *exchange) release() {
	if poison.Enabled { // race builds: a value kept past its handler reads garbage
		poison.Fill(ex.raw)
		poison.Fill(ex.body)
		poison.Fill(ex.trail)
	}
	if ex.cancel != nil {
		ex.cancel()
		ex.ctx, ex.cancel = nil, nil
	}
	if ex.pipe != nil {
		ex.pipe.recycle()
		ex.pipe, ex.msg.BodyReader = nil, nil
	}
	ex.msg.DropMoved() // a moved response no worker wrote (batch.go, submit)
	ex.out, ex.msg.Route = nil, nil
	dropped := cap(ex.raw) > 8<<10
	ex.raw = shrink(ex.raw, 8<<10)
	if ex.hasBody {
		// Only a request body grows these buffers: without one their cache line
		// stays untouched.
		dropped = dropped || cap(ex.body) > 16<<10 || cap(ex.trail) > 1<<10
		ex.body = shrink(ex.body, 16<<10)
		ex.trail = shrink(ex.trail, 1<<10)
		ex.kept = cap(ex.body) + cap(ex.trail)
	}
	if dropped {
		ex.clearMsg() // its views would keep the dropped buffers alive
	}
}

// clear resets ex's request and state before fill, keeping its buffers.
func (ex *exchange) clear() {
	ex.resetMsg()
	ex.chunked, ex.keepAlive, ex.http10, ex.isHead = false, false, false, false
	ex.answered, ex.streaming, ex.ended, ex.discard, ex.raw10 = false, false, false, false, false
	ex.sized, ex.remain = false, 0
	ex.inline, ex.hasBody, ex.fed = false, false, 0
}

// clearMsg empties msg, and the header and trailer fields whose strings point
// into ex's buffers. Spare stays (httpmsg.Request.KeepsSpare). Fields are stored
// one by one: assigning a composite literal builds it on the stack and copies it
// with write barriers, several times the cost.
func (ex *exchange) clearMsg() {
	ex.resetMsg()
	m := &ex.msg
	m.Method, m.Path, m.RawQuery, m.RequestURI, m.Proto = "", "", "", "", ""
	m.Host, m.Scheme = "", ""
	m.ProtoMajor, m.ProtoMinor, m.ContentLength = 0, 0, 0
	m.RemoteAddr, m.TLS, m.Close = nil, nil, false
}

// resetMsg clears the fields of msg that fill does not set (fill sets the
// others, so clear needs no more); TestFillSetsEveryField holds the two
// together when httpmsg.Request grows a field.
func (ex *exchange) resetMsg() {
	m := &ex.msg
	hdr := m.Header[:0]
	if cap(hdr) > 4*inlineFields {
		hdr = ex.hdr[:0]
	}
	httpmsg.ClearFields(m.Header)
	httpmsg.ClearFields(m.Trailer)
	m.Header, m.Trailer = hdr, m.Trailer[:0]
	m.Body, m.BodyReader, m.StreamID = nil, nil, 0
	m.Route, m.InPlace, m.Counted, m.KeepsSpare, m.MoveToWorker = nil, nil, false, true, false
}

// keptBytes is the capacity of the buffers ex keeps for reuse (after release).
func (ex *exchange) keptBytes() int { return cap(ex.raw) + ex.kept }

// dropBuffers releases ex's buffers (the connection's budget is spent).
func (ex *exchange) dropBuffers() {
	ex.raw, ex.body, ex.trail = nil, nil, nil
	ex.kept = 0
	ex.clearMsg()
}

// copyTrailers keeps the trailer fields of a chunked body in ex's own buffer.
func (ex *exchange) copyTrailers(fields []Field) {
	for _, f := range fields {
		start := len(ex.trail)
		ex.trail = append(ex.trail, f.Name...)
		mid := len(ex.trail)
		ex.trail = append(ex.trail, f.Value...)
		ex.msg.Trailer = append(ex.msg.Trailer, httpmsg.Field{
			Name:  bytesconv.B2S(ex.trail[start:mid]),
			Value: bytesconv.B2S(ex.trail[mid:]),
		})
	}
}

// closeAfter decides, when the response head is written, whether the connection
// closes after it.
func (ex *exchange) closeAfter() bool {
	if ex.draining() {
		ex.keepAlive = false
	}
	if ex.pipe != nil && !ex.pipe.discardable(ex) {
		// The handler answers before the whole body arrived and the rest will not
		// be read (a 100-continue never sent, a large rest, a failed body): the
		// connection closes after the answer (RFC 9110 §10.1.1 allows either
		// reading the body or closing). Otherwise serve reads the rest and drops
		// it once the handler returned (discardRest).
		ex.keepAlive = false
	}
	return !ex.keepAlive
}

func shrink(b []byte, max int) []byte {
	if cap(b) > max {
		return nil
	}
	return b[:0]
}

func (ex *exchange) draining() bool { return ex.conn.draining.Load() }

// serve runs the handler and makes sure the request got a complete answer.
func (ex *exchange) serve(h httpmsg.Handler) {
	func() {
		defer func() {
			if p := recover(); p != nil {
				// The framework recovers handler panics itself; this guards the
				// connection against one that escaped.
				ex.keepAlive = false
				if !ex.answered {
					_ = ex.WriteResponse(500, nil, []byte("Internal Server Error"))
				}
			}
		}()
		h.Serve(&ex.msg, ex)
	}()
	switch {
	case !ex.answered:
		if ex.msg.MoveToWorker {
			return // the answer is written on a worker (batch.go, enqueue)
		}
		_ = ex.WriteResponse(500, nil, []byte("Internal Server Error"))
	case ex.streaming && !ex.ended:
		_ = ex.End(nil)
	}
	if ex.pipe != nil && ex.keepAlive {
		// A body the handler did not read to its end (a 404, a redirect, a
		// multipart parser stopping at its final boundary before a chunked body's
		// trailer section): its bytes are read here, never as the next request.
		ex.discardRest()
	}
}

// WriteResponse appends a complete response.
func (ex *exchange) WriteResponse(status int, header []httpmsg.Field, body []byte) error {
	if ex.answered {
		return ErrAnswered
	}
	if status < 200 {
		// An interim status cannot end an exchange: the client would wait forever.
		status, header, body = 500, nil, []byte("Internal Server Error")
	}
	ex.answered = true
	closeConn := ex.closeAfter()
	dst := AppendHeadCached(*ex.out, status, header, int64(len(body)), closeConn, ex.http10 && ex.keepAlive, ex.validCache())
	if !ex.isHead && bodyAllowed(status) {
		dst = append(dst, body...)
	}
	*ex.out = dst
	return nil
}

// bodyAllowed: RFC 9110 §15.2, §15.3.5, §15.4.5: 1xx, 204 and 304 have no content.
func bodyAllowed(status int) bool {
	return status >= 200 && status != 204 && status != 304
}

// WriteHeader starts a streamed response: chunked on HTTP/1.1; on HTTP/1.0, which
// has no chunked coding, close-delimited (the connection closes after it).
func (ex *exchange) WriteHeader(status int, header []httpmsg.Field) error {
	if ex.answered {
		return ErrAnswered
	}
	if status < 200 {
		status, header = 500, nil
	}
	ex.answered, ex.streaming = true, true
	ex.closeAfter()
	closeConn := !ex.keepAlive
	switch {
	case ex.isHead && !ex.http10:
		// The length is unknown: say chunked, as the GET would (RFC 9110 §9.3.2
		// lets HEAD carry the framing fields), and send no body.
		*ex.out = AppendHeadCached(*ex.out, status, header, -1, closeConn, false, ex.validCache())
		ex.discard = true
		return nil
	case !bodyAllowed(status):
		*ex.out = AppendHeadCached(*ex.out, status, header, 0, closeConn, ex.http10 && ex.keepAlive, ex.validCache())
		ex.discard = true
		return nil
	case ex.isHead:
		// HTTP/1.0: the GET's body would be close-delimited, so no framing field;
		// a HEAD response has no body (RFC 9110 §9.3.2), so the connection may stay.
		*ex.out = AppendHeadCached(*ex.out, status, header, CloseDelimited, closeConn, ex.keepAlive, ex.validCache())
		ex.discard = true
		return nil
	case ex.http10:
		// No chunked coding in HTTP/1.0: the body is close-delimited.
		ex.keepAlive = false
		*ex.out = AppendHeadCached(*ex.out, status, header, CloseDelimited, true, false, ex.validCache())
		ex.raw10 = true
		return nil
	}
	*ex.out = AppendHeadCached(*ex.out, status, header, -1, closeConn, false, ex.validCache())
	return nil
}

// Write appends a chunk of a streamed response. On a worker it hands the output to
// the loop every handOffEarly bytes and waits there while the connection's unsent
// output is above outboundHigh, so that a large p (a Blob's body, a file's buffer)
// is held at most once, by the caller, and never copied whole; inline, the loop
// writes it when the callback returns.
func (ex *exchange) Write(p []byte) (int, error) {
	if !ex.streaming || ex.ended {
		return 0, ErrNotStarted
	}
	if ex.discard {
		return len(p), nil
	}
	if ex.out == &ex.conn.inline {
		return ex.appendBody(p)
	}
	written := 0
	for {
		piece := p[written:]
		if len(piece) > handOffEarly {
			piece = piece[:handOffEarly]
		}
		if len(piece) > 4<<10 && cap(*ex.out)-len(*ex.out) < len(piece)+chunkOverhead {
			// One allocation for what the buffer holds until its hand-off,
			// rather than a chain of doublings (the engine may have kept the
			// last one).
			*ex.out = slices.Grow(*ex.out, handOffEarly+len(piece)+chunkOverhead)
		}
		n, err := ex.appendBody(piece)
		written += n
		if err != nil {
			return written, err
		}
		if len(*ex.out) > handOffEarly {
			// Pass it on (with back-pressure) rather than hold more.
			if err := ex.conn.handOff(ex.out, false); err != nil {
				return written - n, err
			}
		}
		if written == len(p) {
			return written, nil
		}
	}
}

// chunkOverhead bounds what chunked framing adds to a piece (size line, CRLFs).
const chunkOverhead = 32

// appendBody frames p into the exchange's output (Write's part).
func (ex *exchange) appendBody(p []byte) (int, error) {
	switch {
	case ex.sized:
		return ex.writeSized(p)
	case ex.raw10:
		*ex.out = append(*ex.out, p...)
	default:
		*ex.out = AppendChunk(*ex.out, p)
	}
	return len(p), nil
}

// Flush sends what was written so far. On the loop (inline) the bytes leave when
// the callback returns; on a worker they are handed to the loop now.
func (ex *exchange) Flush() error {
	if !ex.streaming || ex.ended {
		return ErrNotStarted
	}
	if ex.out != &ex.conn.inline {
		return ex.conn.handOff(ex.out, false)
	}
	return nil
}

// WriteInformational sends an interim (1xx) response ahead of the final one
// (httpmsg.InformationalWriter). An HTTP/1.0 client gets none (RFC 9110 §15.2).
// On a worker it is handed to the loop at once, as net/http flushes it.
func (ex *exchange) WriteInformational(status int, header []httpmsg.Field) error {
	if !httpmsg.ValidInformational(status) {
		return httpmsg.ErrInformational
	}
	if ex.answered {
		return ErrAnswered
	}
	if ex.http10 {
		return nil
	}
	if status == 100 && ex.pipe != nil {
		ex.pipe.sent100() // the handler sent it: no second one at the first Read
	}
	*ex.out = AppendInformational(*ex.out, status, header)
	if ex.out != &ex.conn.inline {
		return ex.conn.handOff(ex.out, false)
	}
	return nil
}

// OnLoop reports whether the exchange is served on the event loop (an inline
// route), where its output is queued whole (httpmsg.LoopWriter).
func (ex *exchange) OnLoop() bool { return ex.out == &ex.conn.inline }

// Abort breaks a streamed response off (httpmsg.Aborter): no last chunk, and
// the connection closes after what was written, so the client sees the message
// incomplete (RFC 9112 §7.1, §6.3 rule 5) instead of a shorter body.
func (ex *exchange) Abort() {
	if ex.streaming && !ex.ended {
		ex.ended = true
		ex.keepAlive = false
	}
}

// End finishes a streamed response.
func (ex *exchange) End(trailer []httpmsg.Field) error {
	if !ex.streaming || ex.ended {
		return ErrNotStarted
	}
	ex.ended = true
	if ex.sized {
		return ex.endSized()
	}
	if ex.discard || ex.raw10 {
		return nil
	}
	*ex.out = AppendLastChunk(*ex.out, trailer)
	return nil
}
