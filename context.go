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
	mv             moved           // an inline route's response left for a worker (tMoved, moved.go)
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
	tMoved
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
		c.stream = StreamWriter{}
	}
	if t&tTrailer != 0 {
		c.resetTrailers()
	}
	if t&tMoved != 0 {
		c.resetMoved()
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
