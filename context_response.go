package celeris

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// BeginCapture makes the response methods (Blob, String, JSON, ...) keep the
// response in the Context instead of sending it, so that middleware can transform
// it (compression, ETag). Streamed responses are not captured. Calls nest.
func (c *Context) BeginCapture() { c.capture++ }

// EndCapture ends the innermost capture and returns the captured status and body
// (valid until the next response method call). ok is false when nothing was
// captured (a streamed response, or no response yet). After it, the response
// methods work again, so the middleware sends the transformed response.
func (c *Context) EndCapture() (status int, body []byte, ok bool) {
	if c.capture > 0 {
		c.capture--
	}
	if !c.captured {
		return 0, nil, false
	}
	c.captured = false
	c.written = false
	return c.capStatus, c.capBody, true
}

// CaptureResponse runs next with the response captured (BeginCapture, next,
// EndCapture) and returns what it captured. The capture ends even when next panics,
// so that a recovery middleware further out can still answer. ok is false when
// nothing was captured (no response yet, or a streamed one).
func (c *Context) CaptureResponse(next HandlerFunc) (status int, body []byte, ok bool, err error) {
	c.BeginCapture()
	ended := false
	defer func() {
		if !ended {
			c.EndCapture()
		}
	}()
	err = next(c)
	ended = true
	status, body, ok = c.EndCapture()
	return status, body, ok, err
}

// ResetHeaders drops every response header set so far.
func (c *Context) ResetHeaders() {
	clear(c.header)
	c.header = c.header[:0]
}

// VisitResponseHeaders calls fn for each response header set so far.
func (c *Context) VisitResponseHeaders(fn func(name, value string)) {
	for _, f := range c.header {
		fn(f.Name, f.Value)
	}
}

// DelHeader removes a response header field.
func (c *Context) DelHeader(name string) {
	out := c.header[:0]
	for _, f := range c.header {
		if !httpmsg.EqualFold(f.Name, name) {
			out = append(out, f)
		}
	}
	clear(c.header[len(out):])
	c.header = out
}

// Status sets the status code of the response written by a later Blob/String
// call that passes code 0, or by the framework when the handler writes nothing.
func (c *Context) Status(code int) *Context {
	c.status = code
	return c
}

// SetHeader sets a response header field, replacing earlier values. Name and
// value are kept until the response is written: pass strings that live that long
// (constants, or values owned by the handler).
func (c *Context) SetHeader(name, value string) {
	for i := range c.header {
		if httpmsg.EqualFold(c.header[i].Name, name) {
			c.header[i].Value = value
			return
		}
	}
	c.header = append(c.header, httpmsg.Field{Name: name, Value: value})
}

// SetHeaderBytes sets a response header field (as SetHeader) to a copy of value
// kept in a buffer the Context owns, so value may be reused once it returns. It
// returns the stored value, which, like every response field, is valid until the
// handler returns. It does not allocate once the buffer has grown (fasthttp's
// SetBytesV).
func (c *Context) SetHeaderBytes(name string, value []byte) string {
	c.touched |= tHvals
	start := len(c.hvals)
	c.hvals = append(c.hvals, value...)
	v := bytesconv.B2S(c.hvals[start:len(c.hvals):len(c.hvals)])
	c.SetHeader(name, v)
	return v
}

// AddHeader adds a response header field.
func (c *Context) AddHeader(name, value string) {
	c.header = append(c.header, httpmsg.Field{Name: name, Value: value})
}

// ResponseHeader returns the value of a response header set so far.
func (c *Context) ResponseHeader(name string) string {
	for i := range c.header {
		if httpmsg.EqualFold(c.header[i].Name, name) {
			return c.header[i].Value
		}
	}
	return ""
}

// Written reports whether the response has been written.
func (c *Context) Written() bool { return c.written }

// StatusCode is the status written (or set with Status so far).
func (c *Context) StatusCode() int { return c.status }

// Blob writes a complete response with the given content type (replacing one set
// before; "" keeps it) and body. Code 0 means the status set with Status, else 200.
// A status outside 200-999 (1xx included) is a programmer error and panics, as
// net/http's WriteHeader does; the server answers 500 and logs it once. String,
// HTML, JSON and NoContent do the same.
//
// A body of up to 64 KiB is copied whole to the connection, and b is borrowed
// only until Blob returns: the caller may change or reuse it at once. A larger
// one is not copied whole but sent from b with its Content-Length, a piece at a
// time as the client takes it, so that a connection holds no more than its
// output bound (Config) whatever the body's size. On a worker route Blob then
// blocks while the client reads slowly, returns an error if it leaves, and
// borrows b until it returns. On an Inline route, which must not block its
// event loop, Blob returns at once and a worker sends the body after the
// handler returned: b is borrowed until the response is sent, so the caller
// must not change it nor give it back to a pool (see Pending). Under a
// middleware that captures the response (compress, etag: BeginCapture) the body
// is captured whole, as that middleware needs it.
func (c *Context) Blob(code int, contentType string, b []byte) error {
	if c.written {
		return ErrResponseWritten
	}
	if contentType != "" {
		c.SetHeader("Content-Type", contentType)
	}
	return c.blob(code, b)
}

// typed writes a complete response whose Content-Type is contentType unless the
// handler set one (String, HTML and JSON keep it, as Gin's and Echo's do).
func (c *Context) typed(code int, contentType string, b []byte) error {
	if c.written {
		return ErrResponseWritten
	}
	for i := range c.header {
		if httpmsg.EqualFold(c.header[i].Name, "Content-Type") {
			return c.blob(code, b)
		}
	}
	c.header = append(c.header, httpmsg.Field{Name: "Content-Type", Value: contentType})
	return c.blob(code, b)
}

func (c *Context) blob(code int, b []byte) error {
	if code == 0 {
		code = c.status
		if code == 0 {
			code = http.StatusOK
		}
	}
	checkFinalStatus(code)
	c.written = true
	c.status = code
	c.bytes = int64(len(b))
	if c.capture > 0 {
		c.captured = true
		c.touched |= tCapture
		c.capStatus = code
		c.capBody = append(c.capBody[:0], b...)
		return nil
	}
	if c.touched&tTrailer != 0 {
		return c.blobWithTrailers(code, b) // trailer.go
	}
	if len(b) > blobCopyMax {
		if sw, ok := c.w.(httpmsg.SizedWriter); ok {
			return c.blobSized(sw, code, b)
		}
	}
	return c.w.WriteResponse(code, c.header, b)
}

// blobCopyMax is the largest body Blob hands to the protocol as one complete
// response (copied whole); a larger one is streamed from the caller's slice.
const blobCopyMax = 64 << 10

// blobSized sends b as a streamed response of known length: the protocol's Write
// takes it a piece at a time, waiting while the connection's output is above its
// bound, and the server ends the response after the handler.
func (c *Context) blobSized(sw httpmsg.SizedWriter, code int, b []byte) error {
	if c.onLoop() && c.Method() != http.MethodHead && bodyAllowedForStatus(code) {
		// An inline route must not wait for the client: a worker sends b
		// (moved.go).
		c.moveBody(b)
		return nil
	}
	if err := sw.WriteHeaderLength(code, c.header, int64(len(b))); err != nil {
		return err
	}
	c.streaming = true
	if c.Method() == http.MethodHead || !bodyAllowedForStatus(code) {
		// The length is announced (RFC 9110 §9.3.2) or there is no content
		// (§15.3.5, §15.4.5): no body to hand over.
		return nil
	}
	_, err := c.w.Write(b)
	return err
}

// Buffer returns an empty buffer that the Context owns, to build a response body
// without allocating once the buffer has grown (as a fasthttp handler writes into
// its RequestCtx):
//
//	b := c.Buffer()
//	b.WriteString("user=")
//	b.WriteString(c.Param("id"))
//	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", b.Bytes())
//
// Blob and String keep no reference to a body of up to 64 KiB once they return,
// so the buffer may then be reused at once (a larger body of an Inline route is
// sent after the handler returned: see Blob). Each call empties the buffer. Like
// the Context, it is valid until the handler returns, and until the response is
// sent when it holds such a body.
func (c *Context) Buffer() *bytes.Buffer {
	c.touched |= tBuffer
	c.ubuf.Reset()
	return &c.ubuf
}

// String writes a text/plain response (a Content-Type set before is kept).
func (c *Context) String(code int, s string) error {
	return c.typed(code, "text/plain; charset=utf-8", bytesconv.S2B(s))
}

// HTML writes a text/html response (a Content-Type set before is kept).
func (c *Context) HTML(code int, s string) error {
	return c.typed(code, "text/html; charset=utf-8", bytesconv.S2B(s))
}

// JSON encodes v and writes it as application/json (a Content-Type set before,
// such as application/problem+json, is kept).
func (c *Context) JSON(code int, v any) error {
	c.touched |= tJSON
	if c.jenc == nil {
		c.jenc = json.NewEncoder(&c.jbuf)
		c.jenc.SetEscapeHTML(false)
	}
	c.jbuf.Reset()
	if err := c.jenc.Encode(v); err != nil {
		return &HTTPError{Code: http.StatusInternalServerError, Err: err}
	}
	b := c.jbuf.Bytes()
	b = b[:len(b)-1] // Encode adds a newline
	return c.typed(code, "application/json", b)
}

// NoContent writes a response without a body.
func (c *Context) NoContent(code int) error {
	return c.Blob(code, "", nil)
}

// Redirect answers with a 3xx status and a Location header.
func (c *Context) Redirect(code int, location string) error {
	if code < 300 || code > 308 {
		return ErrInvalidRedirectCode
	}
	c.SetHeader("Location", location)
	return c.Blob(code, "", nil)
}

// Stream starts a streamed response (chunked on HTTP/1.1, DATA frames on HTTP/2)
// and returns a writer with Flush. The response ends when the handler returns,
// with the trailers set by SetTrailer. A status outside 200-999 panics (see Blob).
func (c *Context) Stream(code int, contentType string) (*StreamWriter, error) {
	return c.startStream(code, contentType, nil, 0)
}

// startStream writes the head of a streamed response and returns its writer:
// framed by sw with length (StreamLength), or, with sw nil, chunked or in DATA
// frames with the trailers the handler declared (Stream).
func (c *Context) startStream(code int, contentType string, sw httpmsg.SizedWriter, length int64) (*StreamWriter, error) {
	if c.written {
		return nil, ErrResponseWritten
	}
	checkFinalStatus(code)
	if contentType != "" {
		c.SetHeader("Content-Type", contentType)
	}
	c.written = true
	c.status = code
	c.stream.w, c.stream.c = c.w, c
	if sw == nil {
		c.stream.startEncoder(code) // stream_encode.go
	}
	var err error
	if sw != nil {
		err = sw.WriteHeaderLength(code, c.header, length)
	} else {
		if c.touched&tTrailer != 0 {
			c.declareTrailers() // trailer.go
		}
		err = c.w.WriteHeader(code, c.header)
	}
	if err != nil {
		return nil, err
	}
	c.streaming = true
	c.stream.inlineCap()
	c.touched |= tStream
	return &c.stream, nil
}

// StreamWriter writes the body of a streamed response. It belongs to the pooled
// Context: valid until the handler returns, like the Context itself.
type StreamWriter struct {
	w        httpmsg.ResponseWriter
	c        *Context
	left     int64          // body bytes an Inline route may still write; -1: no limit (a worker)
	failed   bool           // an Inline route passed InlineStreamMax (moved.go)
	encoding StreamEncoding // set by EncodeStream (stream_encode.go)
	enc      StreamEncoder  // the started stream's encoder, or nil
}

// Write queues p. On a worker it blocks while the client reads slowly (the
// output bound, Config). On an Inline route, whose handler must not block, it
// queues p whole, up to InlineStreamMax bytes for the response: the Write that
// would pass it fails with ErrInlineOutput and breaks the response off.
func (s *StreamWriter) Write(p []byte) (int, error) {
	if s.left >= 0 {
		if int64(len(p)) > s.left || s.failed {
			return s.overflow()
		}
		s.left -= int64(len(p))
	}
	var n int
	var err error
	if s.enc != nil {
		n, err = s.enc.Write(p) // an Inline route's bound counts the bytes before encoding
	} else {
		n, err = s.w.Write(p)
	}
	s.c.bytes += int64(n)
	return n, err
}

// BytesWritten is the number of response body bytes written so far (the
// uncompressed size when a middleware transforms it later).
func (c *Context) BytesWritten() int64 { return c.bytes }

// Error hands err to the server's error handler now, so that middleware running
// after it (a logger, metrics) sees the final status. The server then does not
// run the error handler again for this request, whether the chain returns err,
// nil or another error. It does nothing when err is nil or a response was
// already written.
func (c *Context) Error(err error) {
	if err == nil || c.written {
		return
	}
	c.errored = true
	c.server.cfg.ErrorHandler(c, err)
}

// Flush sends what was written so far. After ErrInlineOutput it fails with it.
func (s *StreamWriter) Flush() error {
	if s.failed {
		return ErrInlineOutput
	}
	if s.enc != nil {
		if err := s.enc.Flush(); err != nil {
			return err
		}
	}
	return s.w.Flush()
}

// Pending reports whether the response was recorded to be sent after the
// handler returns: an Inline route's Blob over 64 KiB, or its file, which a
// worker sends (see Route.Inline). A body passed to Blob is then still
// borrowed: a middleware must not give it back to a pool before the request
// ends.
func (c *Context) Pending() bool { return c.touched&tMoved != 0 }
