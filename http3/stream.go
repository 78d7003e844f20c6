package celerish3

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	httpmsg "github.com/celeris-dev/celeris/transport"
	"github.com/quic-go/quic-go"
)

// reqStream is one request stream (RFC 9114 §4.1): the frames the client sends
// on it and the response the server sends back. The stream's goroutine owns
// every field; the body reader may be read from a handler's other goroutine,
// one Read at a time, and closed from any (closed).
type reqStream struct {
	c   *conn
	str stream
	req httpmsg.Request
	// arena holds the bytes of the request's literal field strings, which
	// req's strings view: valid until reset, after Serve returned.
	arena fieldArena
	ctx   context.Context // the request's: cancelled by a client reset, the end of the connection or the request
	w     responseWriter
	br    bodyReader

	buf  []byte // read buffer: unread bytes are buf[r:n]
	r, n int
	eof  bool // the client's side ended cleanly (FIN read)

	sawHeaders, sawTrailers bool
	tunnel                  bool   // a CONNECT stream (RFC 9114 §4.4, RFC 9220): DATA is a byte stream, not a bounded body
	dataLeft                uint64 // payload bytes left of the current DATA frame
	bodyLen                 int64  // DATA payload bytes received
	bodyErr                 error  // sticky: what the body reader returns once it ended
	watched                 bool   // watchReset set a callback on str
	closed                  atomic.Bool
}

// stream is what a request stream uses of a *quic.Stream; the allocation test
// serves a request through a stream in memory.
type stream interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	Close() error
	CancelRead(code quic.StreamErrorCode)
	CancelWrite(code quic.StreamErrorCode)
	SetReadDeadline(t time.Time) error
	StreamID() quic.StreamID
}

var _ stream = (*quic.Stream)(nil)

var streamPool = sync.Pool{New: func() any {
	s := &reqStream{buf: make([]byte, 0, 4<<10)}
	s.w.s = s
	s.br.s = s
	return s
}}

// reset clears s for reuse, keeping its buffers (the pool holds streams whose
// read buffer grew past 64 KiB without it).
func (s *reqStream) reset() {
	s.req.Reset()
	s.arena.reset()
	httpmsg.ClearFields(s.req.Header[:cap(s.req.Header)])
	httpmsg.ClearFields(s.req.Trailer[:cap(s.req.Trailer)])
	s.w.reset()
	s.c, s.str, s.ctx = nil, nil, nil
	if cap(s.buf) > 64<<10 {
		s.buf = make([]byte, 0, 4<<10)
	}
	s.buf = s.buf[:cap(s.buf)]
	s.r, s.n, s.eof = 0, 0, false
	s.sawHeaders, s.sawTrailers, s.tunnel, s.watched = false, false, false, false
	s.dataLeft, s.bodyLen, s.bodyErr = 0, 0, nil
	s.closed.Store(false)
}

// fill reads more of the stream into buf, growing it up to max bytes of unread
// data. It returns io.EOF once the client's side ended and nothing is left.
func (s *reqStream) fill(max int) error {
	if s.eof {
		return io.EOF
	}
	if s.r > 0 && s.r == s.n {
		s.r, s.n = 0, 0
	}
	if s.n == len(s.buf) {
		if s.r > 0 {
			s.n = copy(s.buf, s.buf[s.r:s.n])
			s.r = 0
		} else {
			if len(s.buf) >= max {
				return connErr(ErrCodeExcessiveLoad, "frame larger than the read limit")
			}
			nb := make([]byte, min(max, 2*len(s.buf)))
			s.n = copy(nb, s.buf[:s.n])
			s.buf = nb
		}
	}
	k, err := s.str.Read(s.buf[s.n:])
	s.n += k
	if err == io.EOF {
		s.eof = true
		if k > 0 {
			return nil
		}
		return io.EOF
	}
	return err
}

// nextFrame reads the next frame header. It returns io.EOF when the client's
// side ended at a frame boundary, errTruncated when it ended inside a header.
func (s *reqStream) nextFrame() (typ, length uint64, err error) {
	for {
		typ, length, k := parseFrameHeader(s.buf[s.r:s.n])
		if k > 0 {
			s.r += k
			return typ, length, nil
		}
		if err := s.fill(64 << 10); err != nil {
			if err == io.EOF && s.r < s.n {
				return 0, 0, errTruncated
			}
			return 0, 0, err
		}
	}
}

// payload reads a whole frame payload of length bytes (at most max) and returns
// it; it is valid until the next read from s.
func (s *reqStream) payload(length uint64, max int) ([]byte, error) {
	for uint64(s.n-s.r) < length {
		if err := s.fill(max); err != nil {
			return nil, truncated(err)
		}
	}
	p := s.buf[s.r : s.r+int(length)]
	s.r += int(length)
	return p, nil
}

// discard skips length bytes of payload (a frame of a type the server ignores).
func (s *reqStream) discard(length uint64) error {
	for length > 0 {
		if s.r == s.n {
			if err := s.fill(len(s.buf)); err != nil {
				return truncated(err)
			}
		}
		k := min(length, uint64(s.n-s.r))
		s.r += int(k)
		length -= k
	}
	return nil
}

// readHead reads frames up to the request's header section and decodes it.
func (s *reqStream) readHead() error {
	limit := s.c.srv.maxFieldSection
	for {
		typ, length, err := s.nextFrame()
		if err == io.EOF {
			// §4.1: a request stream that ends before a complete request is
			// H3_REQUEST_INCOMPLETE.
			return streamErr(ErrCodeRequestIncomplete, "request stream ended without a header section")
		}
		if err != nil {
			return err
		}
		skip, err := requestFrameRule(typ, false, false)
		if err != nil {
			return err
		}
		if skip {
			if err := s.discard(length); err != nil {
				return err
			}
			continue
		}
		if length > limit {
			// The encoded section alone is over the limit the server sent in
			// SETTINGS_MAX_FIELD_SECTION_SIZE (§4.2.2): answered 431 unread.
			return errFieldsTooLarge
		}
		block, err := s.payload(length, int(limit)+16)
		if err != nil {
			return err
		}
		s.sawHeaders = true
		return decodeRequestHead(block, &s.req, limit, &s.arena)
	}
}

// bodyReader is the streamed request body (httpmsg.Request.BodyReader): the
// payload of the DATA frames, read as the handler asks for it, so that QUIC's
// flow control holds the client back while the handler does not read.
type bodyReader struct{ s *reqStream }

// bodyStatusError is a body read error with the status the framework answers it
// with (the StatusCode method the root package's bodyError looks for).
type bodyStatusError struct {
	status int
	err    error
}

func (e *bodyStatusError) Error() string   { return e.err.Error() }
func (e *bodyStatusError) Unwrap() error   { return e.err }
func (e *bodyStatusError) StatusCode() int { return e.status }

// ErrBodyTooLarge is the error a request body read returns past the limit
// (TransportEnv.MaxRequestBodySize, Config.MaxRequestBodySize); the framework
// answers it 413.
var ErrBodyTooLarge = errors.New("celerish3: request body too large")

func (b *bodyReader) Read(p []byte) (int, error) {
	s := b.s
	for s.dataLeft == 0 {
		if s.bodyErr != nil {
			return 0, s.bodyErr
		}
		if err := s.nextBodyFrame(); err != nil {
			s.bodyErr = err
			return 0, err
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if uint64(len(p)) > s.dataLeft {
		p = p[:s.dataLeft]
	}
	var k int
	if s.r < s.n {
		k = copy(p, s.buf[s.r:s.n])
		s.r += k
	} else {
		var err error
		k, err = s.str.Read(p)
		if err == io.EOF {
			s.eof = true
			if uint64(k) < s.dataLeft {
				s.bodyErr = s.readError(errTruncated)
			}
		} else if err != nil {
			s.bodyErr = s.readError(err)
		}
	}
	s.dataLeft -= uint64(k)
	if k == 0 && s.bodyErr != nil {
		return 0, s.bodyErr
	}
	return k, nil
}

// Close ends a Read blocked on another goroutine and makes later reads fail:
// the server stops reading the stream (STOP_SENDING H3_NO_ERROR, RFC 9114
// §4.1: the server does not need the rest of the request).
func (b *bodyReader) Close() error {
	if b.s.closed.CompareAndSwap(false, true) {
		b.s.str.CancelRead(quic.StreamErrorCode(ErrCodeNoError))
	}
	return nil
}

// nextBodyFrame reads frames up to the next DATA payload, the trailers and the
// end of the stream. It returns io.EOF at the end of a body whose length
// matches its content-length.
func (s *reqStream) nextBodyFrame() error {
	for {
		typ, length, err := s.nextFrame()
		if err == io.EOF {
			if s.req.ContentLength >= 0 && s.bodyLen != s.req.ContentLength {
				// §4.1.2: "A request or response that is defined as having
				// content when it contains a Content-Length header field (...)
				// is malformed if the value of a Content-Length header field
				// does not equal the sum of the DATA frame lengths received."
				return s.readError(malformed("body shorter than content-length"))
			}
			return io.EOF
		}
		if err != nil {
			return s.readError(err)
		}
		skip, err := requestFrameRule(typ, true, s.sawTrailers)
		if err != nil {
			return s.readError(err)
		}
		switch {
		case skip:
			if err := s.discard(length); err != nil {
				return s.readError(err)
			}
		case typ == frameHeaders:
			limit := s.c.srv.maxFieldSection
			if length > limit {
				return s.readError(errFieldsTooLarge)
			}
			block, err := s.payload(length, int(limit)+16)
			if err != nil {
				return s.readError(err)
			}
			s.sawTrailers = true
			if err := decodeTrailers(block, &s.req, limit, &s.arena); err != nil {
				return s.readError(err)
			}
		default: // DATA
			s.bodyLen += int64(length)
			if s.req.ContentLength >= 0 && s.bodyLen > s.req.ContentLength {
				return s.readError(malformed("body longer than content-length"))
			}
			if s.bodyLen > s.c.srv.maxBody && !s.tunnel {
				return &bodyStatusError{status: 413, err: ErrBodyTooLarge}
			}
			s.dataLeft = length
			if length > 0 {
				return nil
			}
		}
	}
}

// readError acts on an error met while reading the body: a connection error
// closes the connection, a stream error resets the stream; the handler gets an
// error the framework answers 400 (or nothing, once the stream is gone).
func (s *reqStream) readError(err error) error {
	if code, isConn, ok := codeOf(err); ok {
		if isConn {
			s.c.closeWithError(err)
		} else {
			s.resetStream(code)
		}
		return &bodyStatusError{status: 400, err: err}
	}
	if s.closed.Load() {
		return &bodyStatusError{status: 400, err: io.ErrUnexpectedEOF}
	}
	if _, ok := errors.AsType[*quic.StreamError](err); ok {
		// The client reset its side of the stream: the body is incomplete.
		return &bodyStatusError{status: 400, err: io.ErrUnexpectedEOF}
	}
	return err
}

// resetStream aborts both directions of the stream with code (a stream error,
// RFC 9114 §8).
func (s *reqStream) resetStream(code ErrCode) {
	s.closed.Store(true)
	s.str.CancelRead(quic.StreamErrorCode(code))
	s.w.cancel(code)
}

// serve runs the request on the stream's goroutine: head, handler, response,
// then the end of the stream.
func (s *reqStream) serve(ctx context.Context) {
	s.req.RemoteAddr = s.c.qc.RemoteAddr()
	s.req.TLS = s.c.tls()
	s.handle(ctx)
}

// handle is serve after the connection's facts are in the request.
func (s *reqStream) handle(ctx context.Context) {
	srv := s.c.srv
	s.req.StreamID = uint32(s.str.StreamID())
	s.ctx = ctx
	// The header section must arrive within the read-header timeout: a stream
	// that trickles it (slowloris) is reset instead of holding its goroutine.
	_ = s.str.SetReadDeadline(time.Now().Add(srv.headerTimeout))
	if err := s.readHead(); err != nil {
		s.headError(err)
		return
	}
	_ = s.str.SetReadDeadline(time.Time{})
	s.tunnel = s.req.Method == "CONNECT"
	if !safeMethod(s.req.Method) && !s.c.awaitHandshake(ctx) {
		// 0-RTT data may be replayed (RFC 9001 §9.2): a request with an
		// unsafe method waits for the handshake (RFC 8470 §3, "delay
		// processing of early data until the handshake completes"), which a
		// replay never completes.
		s.resetStream(ErrCodeRequestRejected)
		return
	}
	// The body: when the stream already ended after the header section
	// (typical of a GET), there is none; otherwise it is streamed.
	if s.r == s.n && s.eof {
		if s.req.ContentLength > 0 {
			s.resetStream(ErrCodeMessage) // §4.1.2: content-length without content
			return
		}
		s.req.ContentLength = 0
		s.bodyErr = io.EOF
	} else if s.req.ContentLength > srv.maxBody {
		s.w.refuse(413)
		s.finish()
		return
	} else {
		s.req.BodyReader = &s.br
		if !s.eof {
			s.watched = watchReset(s.str)
		}
	}
	s.w.isHead = s.req.Method == "HEAD"
	srv.handler.Prepare(&s.req)
	srv.handler.Serve(&s.req, &s.w)
	s.finish()
}

// headError answers a request whose head could not be read.
func (s *reqStream) headError(err error) {
	if err == errFieldsTooLarge {
		s.w.refuse(431)
		s.finish()
		return
	}
	code, isConn, ok := codeOf(err)
	if ne, isNet := errors.AsType[net.Error](err); isNet && ne.Timeout() {
		// §4.1: the request did not arrive in time; it is incomplete.
		s.resetStream(ErrCodeRequestIncomplete)
		return
	}
	switch {
	case !ok:
		// The client reset the stream or the connection went away.
		s.str.CancelRead(quic.StreamErrorCode(ErrCodeRequestCancelled))
		s.w.cancel(ErrCodeRequestCancelled)
	case isConn:
		s.c.closeWithError(err)
	default:
		s.resetStream(code)
	}
}

// finish ends the stream after the handler: a response left open is reset, and
// a request body not read to its end is no longer wanted (§4.1: "the server
// ... MAY abort reading the request stream, send a complete response, and
// cleanly close the sending part of the stream. The error code H3_NO_ERROR
// SHOULD be used when requesting that the client stop sending").
func (s *reqStream) finish() {
	s.w.finish()
	if s.watched {
		// The request is over: a reset that comes later (the client's
		// answer to STOP_SENDING) cancels nothing.
		s.str.(resetWatcher).SetReceiveFinalSizeCallback(nil)
	}
	if !s.eof && !s.closed.Load() {
		s.closed.Store(true)
		s.str.CancelRead(quic.StreamErrorCode(ErrCodeNoError))
	}
}

// safeMethod reports the methods RFC 9110 §9.2.1 defines as safe.
func safeMethod(m string) bool {
	return m == "GET" || m == "HEAD" || m == "OPTIONS" || m == "TRACE"
}

// resetWatcher is the part of a *quic.Stream that watchReset needs.
type resetWatcher interface {
	SetReceiveFinalSizeCallback(func(int64))
	Peek(b []byte) (int, error)
	CancelWrite(code quic.StreamErrorCode)
}

// watchReset cancels the request's context when the client resets its side of
// the stream (RESET_STREAM) while the handler is not reading the body: RFC
// 9114 §4.1.1 ("Clients can cancel requests by resetting and aborting
// request streams"), and a server that receives a cancelled request may
// abandon its response (H3_REQUEST_CANCELLED, §8.1). The request's context is
// the stream's send-side context, which quic-go ends when the send side is
// reset, so the server resets it.
//
// The stream is watched only while the server has not read the end of its
// receive side (a request whose body is still coming, or one that the client
// keeps open): a GET that ended with its HEADERS frame, or a small body read
// with the head up to its FIN, costs nothing. quic-go calls the
// callback from its connection loop when the final size is known, from a FIN
// or a RESET_STREAM alike, and it must not block there; only then, once per
// request, a goroutine peeks at the stream to tell the two apart: a reset
// stream's Peek fails with a remote *quic.StreamError at once, a finished one
// returns data or io.EOF. The goroutine ends when Peek returns, which it does
// once the final size is known (or the connection closes); it holds only the
// *quic.Stream, never the pooled reqStream.
// It reports whether the stream is watched; finish then removes the callback.
func watchReset(str stream) bool {
	rw, ok := str.(resetWatcher)
	if ok {
		rw.SetReceiveFinalSizeCallback(func(int64) { go probeReset(rw) })
	}
	return ok
}

// probeReset resets the send side of a stream whose receive side the client
// reset (see watchReset).
func probeReset(rw resetWatcher) {
	var b [1]byte
	_, err := rw.Peek(b[:])
	if se, ok := errors.AsType[*quic.StreamError](err); ok && se.Remote {
		rw.CancelWrite(quic.StreamErrorCode(ErrCodeRequestCancelled))
	}
}
