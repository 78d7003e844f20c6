package celeris

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/poison"
	"github.com/celeris-dev/celeris/internal/router"
)

// Context carries one request and its response through the handler.
//
// Lifetime: a Context is pooled and reused. It, and every string or slice its
// accessors return (Path, Param, Query, Header, Body, ...), are valid only until the
// handler returns. Use Clone (or strings.Clone / bytes.Clone) for anything kept
// longer, e.g. passed to a goroutine.
// Config.CopyRequestValues makes those accessors return copies
// instead; race builds poison the recycled buffers, so a test that keeps a
// borrowed value fails.
type Context struct {
	// Every request touches the fields up to hdrBuf; they come first so that they
	// share few cache lines (a pipelined batch in safe mode holds many Contexts, each
	// cold again when its worker reaches it). The fields after hdrBuf belong to
	// features a request may not use: touched says which to clear.
	server  *Server
	req     *httpmsg.Request
	w       httpmsg.ResponseWriter
	route   *Route
	header  []httpmsg.Field
	status  int
	bytes   int64  // response body bytes written
	capture int    // BeginCapture depth
	touched uint16 // the features below hdrBuf this request used (t* bits)

	written   bool
	errored   bool // Error ran the error handler
	streaming bool // Stream started a streamed response
	captured  bool // a response was captured
	qparsed   bool
	allow     string // Allow value of a 405 answer
	params    router.Params
	hdrBuf    [8]httpmsg.Field

	body      []byte       // read once from a streamed request body (tBody)
	bodyErr   error        // error of that read (tBody)
	jbuf      bytes.Buffer // JSON encoding scratch (tJSON)
	jenc      *json.Encoder
	ubuf      bytes.Buffer // Buffer's, for the handler (tBuffer)
	hvals     []byte       // SetHeaderBytes copies, valid until reset (tHvals)
	query     []kv         // parsed query, lazily (tQuery)
	values    []kvAny      // (tValues)
	capStatus int          // captured status (tCapture)
	capBody   []byte       // captured body, owned (tCapture)

	methodOverride string          // set by SetMethod (Pre middleware) (tOverride)
	pathOverride   string          // set by SetPath (Pre middleware) (tOverride)
	ctx            context.Context // set by SetContext or Context (tCtx)
	stream         StreamWriter    // the writer Stream returns (tStream)
	bodyRd         bodyReader      // the reader BodyReader returns (tBody)
	trailer        []httpmsg.Field // response trailers, SetTrailer (tTrailer)
}

// Bits of Context.touched: which of the fields after hdrBuf a request set, so that
// reset clears only those.
const (
	tBody uint16 = 1 << iota
	tJSON
	tBuffer
	tHvals
	tQuery
	tValues
	tCapture
	tOverride
	tCtx
	tStream
	tTrailer
)

type kv struct{ k, v string }
type kvAny struct {
	k string
	v any
}

func (c *Context) reset() {
	c.req, c.w, c.route, c.allow = nil, nil, nil, ""
	c.params.Reset()
	c.status, c.bytes, c.capture = 0, 0, 0
	httpmsg.ClearFields(c.header)
	c.header = c.hdrBuf[:0]
	c.written, c.errored, c.streaming, c.captured, c.qparsed = false, false, false, false, false
	t := c.touched
	if t == 0 {
		return
	}
	c.touched = 0
	if t&tBody != 0 {
		c.body, c.bodyErr, c.bodyRd.r = nil, nil, nil
	}
	if t&tJSON != 0 {
		if c.jbuf.Cap() > 64<<10 {
			c.jbuf = bytes.Buffer{}
			c.jenc = nil
		}
		c.jbuf.Reset()
	}
	if t&tBuffer != 0 {
		poison.Fill(c.ubuf.Bytes()) // race builds: a kept Buffer().Bytes() reads garbage
		if c.ubuf.Cap() > 64<<10 {
			c.ubuf = bytes.Buffer{}
		}
		c.ubuf.Reset()
	}
	if t&tHvals != 0 {
		if cap(c.hvals) > 4<<10 {
			c.hvals = nil
		} else {
			c.hvals = c.hvals[:0]
		}
	}
	if t&tQuery != 0 {
		clear(c.query)
		c.query = c.query[:0]
	}
	if t&tValues != 0 {
		c.closeNetRequest()
		if v, ok := c.Get(formKey); ok {
			if fc, ok := v.(*formCache); ok && fc.multi != nil {
				_ = fc.multi.RemoveAll() // multipart temp files end with the request
			}
		}
		clear(c.values)
		c.values = c.values[:0]
	}
	if t&tCapture != 0 {
		c.capStatus = 0
		c.capBody = shrinkBuf(c.capBody, 64<<10)
	}
	if t&tOverride != 0 {
		c.methodOverride, c.pathOverride = "", ""
	}
	if t&tCtx != 0 {
		c.ctx = nil
	}
	if t&tStream != 0 {
		c.stream.w, c.stream.c = nil, nil
	}
	if t&tTrailer != 0 {
		c.resetTrailers()
	}
}

func shrinkBuf(b []byte, max int) []byte {
	if cap(b) > max {
		return nil
	}
	return b[:0]
}

func (c *Context) method() string {
	if c.touched&tOverride != 0 && c.methodOverride != "" {
		return c.methodOverride
	}
	return c.req.Method
}

func (c *Context) path() string {
	if c.touched&tOverride != 0 && c.pathOverride != "" {
		return c.pathOverride
	}
	return c.req.Path
}

// SetMethod changes the method the router sees (for Pre middleware, e.g. a method
// override). It has no effect once routing is done.
func (c *Context) SetMethod(m string) { c.methodOverride, c.touched = m, c.touched|tOverride }

// SetPath changes the path the router sees (for Pre middleware, e.g. a rewrite).
func (c *Context) SetPath(p string) { c.pathOverride, c.touched = p, c.touched|tOverride }

// SetContext replaces the request's context.Context (e.g. with a deadline) for the
// rest of the chain.
func (c *Context) SetContext(ctx context.Context) { c.ctx, c.touched = ctx, c.touched|tCtx }

// RawQuery is the query string without '?', not decoded.
func (c *Context) RawQuery() string { return c.own(c.req.RawQuery) }

// RequestURI is the request target as received (HTTP/1.1) or :path (HTTP/2).
func (c *Context) RequestURI() string { return c.own(c.req.RequestURI) }

// ContentLength is the declared request body length, -1 when unknown.
func (c *Context) ContentLength() int64 { return c.req.ContentLength }

// VisitTrailers calls fn for each request trailer field; trailers are available
// once the body was read to its end.
func (c *Context) VisitTrailers(fn func(name, value string)) {
	for _, f := range c.req.Trailer {
		fn(f.Name, f.Value)
	}
}

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

// Clone returns a copy of s that stays valid after the handler returns.
func (c *Context) Clone(s string) string { return strings.Clone(s) }

// Method is the request method (as rewritten by SetMethod, if it was).
func (c *Context) Method() string { return c.method() }

// Path is the request path, not decoded (as rewritten by SetPath, if it was).
// Valid until the handler returns.
func (c *Context) Path() string { return c.own(c.path()) }

// Proto is "HTTP/1.0", "HTTP/1.1" or "HTTP/2.0".
func (c *Context) Proto() string { return c.req.Proto }

// Host is the Host header (HTTP/1.1) or :authority (HTTP/2).
func (c *Context) Host() string { return c.own(c.req.Host) }

// RemoteAddr is the client's address.
func (c *Context) RemoteAddr() net.Addr { return c.req.RemoteAddr }

// RoutePattern is the pattern of the matched route, "" when none matched.
func (c *Context) RoutePattern() string {
	if c.route == nil {
		return ""
	}
	return c.route.pattern
}

// Context returns the request's context.Context. It is cancelled when the client
// goes away (connection closed or reset, HTTP/2 stream reset) and when the server's
// shutdown deadline passes. It is created on first use: requests that never ask
// pay nothing for it.
func (c *Context) Context() context.Context {
	if c.touched&tCtx != 0 && c.ctx != nil {
		return c.ctx
	}
	if cw, ok := c.w.(httpmsg.ContextWriter); ok {
		c.ctx, c.touched = cw.Context(), c.touched|tCtx
		return c.ctx
	}
	return context.Background()
}

// Query returns the first value of the query parameter name, decoded ("" when
// absent). Valid until the handler returns.
func (c *Context) Query(name string) string {
	if !c.qparsed {
		c.parseQuery()
	}
	for i := range c.query {
		if c.query[i].k == name {
			return c.own(c.query[i].v)
		}
	}
	return ""
}

// QueryValues returns every query parameter as url.Values (a fresh copy).
func (c *Context) QueryValues() url.Values {
	v, _ := url.ParseQuery(c.req.RawQuery)
	return v
}

func (c *Context) parseQuery() {
	c.qparsed = true
	c.touched |= tQuery
	q := c.req.RawQuery
	for q != "" {
		var pair string
		pair, q, _ = strings.Cut(q, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		k, ok1 := unescape(k)
		v, ok2 := unescape(v)
		if !ok1 || !ok2 {
			continue // a malformed escape drops the pair, as net/url does
		}
		c.query = append(c.query, kv{k, v})
	}
}

// unescape decodes a query component; it allocates only when there is something
// to decode.
func unescape(s string) (string, bool) {
	if strings.IndexByte(s, '%') < 0 && strings.IndexByte(s, '+') < 0 {
		return s, true
	}
	u, err := url.QueryUnescape(s)
	return u, err == nil
}

// Header returns the first value of the request header name (case-insensitive).
// Valid until the handler returns.
func (c *Context) Header(name string) string {
	v, _ := c.req.HeaderValue(name)
	return c.own(v)
}

// VisitHeaders calls fn for each request header field in order.
func (c *Context) VisitHeaders(fn func(name, value string)) {
	for _, f := range c.req.Header {
		fn(f.Name, f.Value)
	}
}

// Body returns the whole request body. Valid until the handler returns. A body over
// MaxRequestBodySize is a 413 *HTTPError; a malformed or incomplete one a 400
// *HTTPError wrapping the protocol's error (errors.Is(err, ErrBodyAborted) holds
// when the client went away).
func (c *Context) Body() ([]byte, error) {
	if c.req.BodyReader == nil {
		return c.ownBytes(c.req.Body), nil
	}
	if c.body == nil && c.bodyErr == nil {
		limit := c.server.cfg.MaxRequestBodySize
		b, err := io.ReadAll(io.LimitReader(c.req.BodyReader, limit+1))
		if err == nil && int64(len(b)) > limit {
			err = errBodyTooLarge()
		}
		err = bodyError(err)
		c.body, c.bodyErr = b, err
		c.touched |= tBody
	}
	return c.body, c.bodyErr
}

// BodyReader returns the request body as a stream. A read error the client caused
// is an *HTTPError (413 past MaxRequestBodySize, 400 for a malformed or incomplete
// body) wrapping the protocol's error, as Body's is. A streamed body's reader is
// also an io.Closer: Close ends a Read blocked on another goroutine (a handler
// giving up on a slow client), and later Reads fail.
func (c *Context) BodyReader() io.Reader {
	if c.req.BodyReader != nil {
		c.bodyRd.r = c.req.BodyReader
		c.touched |= tBody
		return &c.bodyRd
	}
	return bytes.NewReader(c.req.Body)
}

// BindJSON decodes the JSON request body into v, then runs Config.Validator on v
// as Bind does (see Validate). A wrong Content-Type gives a 415 HTTPError,
// malformed JSON a 400, a failed validation Validate's 400.
func (c *Context) BindJSON(v any) error {
	if err := c.decodeJSON(v); err != nil {
		return err
	}
	return c.Validate(v)
}

// decodeJSON is BindJSON without validation (Bind validates once, at its end).
func (c *Context) decodeJSON(v any) error {
	if ct := c.Header("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return NewHTTPError(http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		}
	}
	b, err := c.Body()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return &HTTPError{Code: http.StatusBadRequest, Message: "malformed JSON body: " + err.Error(), Err: err}
	}
	return nil
}

// Set stores a value for later middleware or handlers of this request.
func (c *Context) Set(key string, v any) {
	c.touched |= tValues
	for i := range c.values {
		if c.values[i].k == key {
			c.values[i].v = v
			return
		}
	}
	c.values = append(c.values, kvAny{key, v})
}

// Get returns a value stored with Set.
func (c *Context) Get(key string) (any, bool) {
	for i := range c.values {
		if c.values[i].k == key {
			return c.values[i].v, true
		}
	}
	return nil, false
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
// b is borrowed until Blob returns, never kept after: the caller may change or
// reuse it at once. A body of up to 64 KiB is copied whole to the connection; a
// larger one is not copied whole but sent from b with its Content-Length, a piece
// at a time as the client takes it, so that a connection holds no more than its
// output bound (Config) whatever the body's size; Blob then blocks while the
// client reads slowly, and returns an error if it leaves. On an inline route,
// which must not block its event loop, the body is queued whole; under a
// middleware that captures the response (compress, etag: BeginCapture) it is
// captured whole, as that middleware needs it.
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
// Blob and String keep no reference to the body once they return, so the buffer
// may be reused at once. Each call empties the buffer. Like the Context, it is
// valid until the handler returns.
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
	if c.written {
		return nil, ErrResponseWritten
	}
	checkFinalStatus(code)
	if contentType != "" {
		c.SetHeader("Content-Type", contentType)
	}
	c.written = true
	c.status = code
	if c.touched&tTrailer != 0 {
		c.declareTrailers() // trailer.go
	}
	if err := c.w.WriteHeader(code, c.header); err != nil {
		return nil, err
	}
	c.streaming = true
	c.stream.w, c.stream.c = c.w, c
	c.touched |= tStream
	return &c.stream, nil
}

// StreamWriter writes the body of a streamed response. It belongs to the pooled
// Context: valid until the handler returns, like the Context itself.
type StreamWriter struct {
	w httpmsg.ResponseWriter
	c *Context
}

// Write queues p; it may block when the client reads slowly (HTTP/2).
func (s *StreamWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
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

// Flush sends what was written so far.
func (s *StreamWriter) Flush() error { return s.w.Flush() }
