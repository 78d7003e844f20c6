package celeris

// net/http handlers and middleware inside Celeris.
//
// Life of an adapted request: Adapt builds an *http.Request from the Context
// (newNetRequest) and hands the handler an adaptWriter. The writer buffers the body
// up to adaptBufferSize; when the handler returns first, the response leaves as one
// complete response with a Content-Length through Context.Blob, exactly as a native
// handler's would (capture middleware such as compression sees it too). A Flush, or
// a body that outgrows the buffer, switches the writer to a streamed response
// (Context.Stream); from then on the buffer is pushed to the client whenever it fills
// and on every Flush, so no response is ever held whole in memory.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// adaptBufferSize is how much of an adapted handler's body is buffered before the
// response is streamed instead of sent whole with a Content-Length.
const adaptBufferSize = 32 << 10

// Adapt returns a HandlerFunc that runs the net/http handler h.
//
// The handler gets an *http.Request built from the Context: method, URL (from the
// request target; a path rewritten by SetPath replaces the URL's path), protocol,
// header (canonical names; Host moved to r.Host as net/http does), Host,
// RemoteAddr, ContentLength, Close, the Context's context.Context, and the route's
// parameters as path values (r.PathValue("id") for a ":id" route). Every string in
// it is a copy, so the handler may keep them as it would under net/http. The body
// streams from the connection, and may be read while the response is written
// (full duplex, on both protocols). As net/http documents, r.Trailer holds the
// trailer keys the request declared in its Trailer field (which leaves r.Header)
// from the start, and their values once the body has been read to io.EOF.
// Body.Close ends a Read blocked on another goroutine. Reading r.Body after the
// handler returned fails.
//
// The http.ResponseWriter buffers up to 32 KiB: a handler that returns before
// writing more (and without flushing) produces one complete response with a
// Content-Length, as fast as a native handler. Flush (http.Flusher, or
// http.ResponseController) or a larger body switches to a streamed response
// (chunked on HTTP/1.1, DATA frames on HTTP/2): from then on buffered bytes reach
// the client whenever 32 KiB accumulate and at every Flush. A missing Content-Type
// is sniffed from the first bytes, as net/http does.
//
// Differences from net/http's own server:
//   - Framing is Celeris's: Content-Length, Transfer-Encoding, Connection,
//     Keep-Alive, Proxy-Connection, Upgrade and Date set by the handler are dropped.
//     A HEAD response therefore carries the length of the body the handler wrote
//     (0 when it wrote none), not a Content-Length it set by hand.
//   - Informational responses (WriteHeader with 1xx: 103 Early Hints, 100) are
//     sent as net/http sends them, with the header's fields at that moment,
//     except to HTTP/1.0 clients. WriteHeader(101) is held for a Hijack, which
//     writes it first.
//   - http.Hijacker works on HTTP/1.1 before the response was written (or
//     after WriteHeader(101), as WebSocket libraries do), on routes that run on
//     a worker (not Inline); on HTTP/2 Hijack reports http.ErrNotSupported, as
//     net/http's HTTP/2 server has no Hijacker (adapt_hijack.go).
//   - Response trailers work as in net/http: names declared in a Trailer header
//     before the body, or http.TrailerPrefix keys set at any time. A response
//     with trailers is always streamed (chunked on HTTP/1.1, as net/http does
//     for declared trailers), also when net/http would send a small one with a
//     Content-Length and lose its TrailerPrefix trailers. Fields that may not be
//     trailers (RFC 9110 §6.5.1: Content-Length, Content-Type, Set-Cookie,
//     Authorization, Cache-Control, ...) are dropped.
//   - EnableFullDuplex of http.ResponseController returns nil without changing
//     anything: the body stays readable after the response started, on both
//     protocols. (On HTTP/1.1 a body with a Content-Length up to 64 KiB is read
//     whole before the handler runs; chunked and larger bodies stream.)
//     SetReadDeadline and SetWriteDeadline report http.ErrNotSupported.
//   - Body.Close leaves the rest of the body unread: on HTTP/1.1 the connection
//     then closes after the response unless the body had arrived whole.
//
// A status code outside 100-999 panics, as in net/http; the panic becomes a 500.
//
// A handler that also implements NativeHandler (the gRPC server of
// github.com/celeris-dev/celeris/grpc does) is not adapted: Adapt returns its
// ServeCeleris method, which serves the request on the Context directly.
func Adapt(h http.Handler) HandlerFunc {
	if h == nil {
		panic("celeris: Adapt of a nil http.Handler")
	}
	if nh, ok := h.(NativeHandler); ok {
		return nh.ServeCeleris
	}
	return func(c *Context) error {
		r, body := newNetRequest(c, c.Context())
		w := acquireAdaptWriter(c, r.Method == http.MethodHead)
		h.ServeHTTP(w, r)
		body.close()
		err := w.finish()
		releaseAdaptWriter(w)
		return err
	}
}

// NativeHandler is implemented by an http.Handler that can also serve a request
// on a Celeris Context, faster than through the *http.Request and
// http.ResponseWriter that Adapt builds. Adapt(h) returns h.ServeCeleris when h
// implements it, so one value mounts under net/http (ServeHTTP) and natively
// under Celeris (celeris.Adapt(h)) alike. ServeCeleris is a HandlerFunc: the
// same rules apply (it answers through c, and everything borrowed from c is
// valid until it returns). Both methods must serve the same resource.
type NativeHandler interface {
	http.Handler
	ServeCeleris(c *Context) error
}

// AdaptFunc is Adapt for a function.
func AdaptFunc(f http.HandlerFunc) HandlerFunc {
	if f == nil {
		panic("celeris: AdaptFunc of a nil http.HandlerFunc")
	}
	return Adapt(f)
}

// WrapMiddleware turns net/http middleware (func(http.Handler) http.Handler) into
// a MiddlewareFunc. The middleware is composed once per route, when the server
// starts; per request it gets an *http.Request built as for Adapt and a
// ResponseWriter that behaves as Adapt's.
//
// When the middleware calls the next handler, the Celeris chain continues with
// what it changed:
//   - its context.Context (values, deadline, cancellation) becomes c.Context() for
//     the rest of the chain, and is restored afterwards;
//   - the request it passed on: URL path (SetPath; seen by the router when the
//     link is Pre middleware), query, method, Host, RemoteAddr (ClientIP), header
//     fields and body (a body limited by http.MaxBytesHandler stays limited:
//     413) apply to the Context for the rest of the request;
//   - response header fields it set on the ResponseWriter before calling next are
//     copied to the Celeris response.
//
// When it passes next the ResponseWriter it got, the rest of the chain answers
// through the Context directly; a wrapper that watches writes sees WriteHeader
// with the final status when the response was written by the time next returned.
// When it passes a writer of its own (compression, a logger counting bytes), the
// chain's complete response (the error handler's answer included) is captured and
// written through that writer, so the wrapper sees and transforms it; a streamed
// response still goes to the client directly (the wrapper sees its status only).
// Writes the middleware makes after next returned are dropped unless it passed
// its own writer. If the middleware answers itself without calling next (an
// authentication failure, say), its response is sent.
//
// The middleware must call next synchronously, at most once: middleware that runs
// the handler on another goroutine and may return before it ends
// (http.TimeoutHandler) is not supported; use Context.SetContext with a deadline
// instead.
func WrapMiddleware(m func(http.Handler) http.Handler) MiddlewareFunc {
	if m == nil {
		panic("celeris: WrapMiddleware of a nil middleware")
	}
	return func(next HandlerFunc) HandlerFunc {
		inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			runWrappedNext(next, w, r)
		})
		h := m(inner)
		if h == nil {
			panic("celeris: WrapMiddleware: the middleware returned a nil http.Handler")
		}
		return func(c *Context) error {
			st := &wrapState{c: c}
			st.ctx = wrapCtx{Context: c.Context(), st: st}
			r, body := newNetRequest(c, &st.ctx)
			st.orig.set(r)
			w := acquireAdaptWriter(c, r.Method == http.MethodHead)
			w.st = st
			st.w = w
			h.ServeHTTP(w, r)
			body.close()
			if st.through {
				if c.streaming {
					w.done = true // streamed past the wrapper (wrap_propagate.go)
				}
				err := w.finish()
				releaseAdaptWriter(w)
				if st.err != nil {
					return st.err
				}
				return err
			}
			if st.called {
				w.done = true
				releaseAdaptWriter(w)
				return st.err
			}
			err := w.finish()
			releaseAdaptWriter(w)
			return err
		}
	}
}

// wrapState is one request through a WrapMiddleware link. It is reached from the
// http.Request's context (or, failing that, from the ResponseWriter).
type wrapState struct {
	ctx     wrapCtx
	c       *Context
	w       *adaptWriter
	called  bool // the middleware called next
	through bool // next answered through the middleware's own writer (wrap_propagate.go)
	orig    netOrig
	err     error // what the rest of the chain returned
}

// wrapKey is the context key of a *wrapState.
type wrapKey struct{}

// wrapCtx carries the wrapState through the middleware without an allocation of
// its own (it is embedded in wrapState).
type wrapCtx struct {
	context.Context
	st *wrapState
}

func (x *wrapCtx) Value(key any) any {
	if key == (wrapKey{}) {
		return x.st
	}
	return x.Context.Value(key)
}

// runWrappedNext is the http.Handler a WrapMiddleware link passes to the net/http
// middleware as "next": it continues the Celeris chain.
func runWrappedNext(next HandlerFunc, w http.ResponseWriter, r *http.Request) {
	st, _ := r.Context().Value(wrapKey{}).(*wrapState)
	if st == nil {
		st = findWrapState(w)
	}
	if st == nil {
		// The middleware replaced both the request context and the writer with
		// values unrelated to ours: there is no Context to continue with.
		http.Error(w, "celeris: WrapMiddleware lost the request", http.StatusInternalServerError)
		return
	}
	if st.called {
		return // at most once; see WrapMiddleware
	}
	st.called = true
	c := st.c
	prevCtx := c.ctx
	if ctx := r.Context(); ctx != context.Context(&st.ctx) {
		c.SetContext(ctx)
	}
	c.applyNetRequest(&st.orig, r) // what the middleware changed (wrap_propagate.go)
	aw := st.w
	if w != http.ResponseWriter(aw) && !aw.wrote {
		// The middleware's own writer: the response goes through it.
		st.through = true
		st.err = serveThrough(c, next, w)
		c.ctx = prevCtx
		return
	}
	copyNetHeader(c, w.Header(), nil, false)
	if aw.wrote {
		// The middleware committed a response before calling next: it wins, as the
		// first write does under net/http.
		_ = aw.finish()
	}
	aw.done = true
	st.err = next(c)
	c.ctx = prevCtx
	if c.written && c.status >= 100 && c.status <= 999 {
		w.WriteHeader(c.status) // let status-recording wrappers see the status
	}
}

// findWrapState walks the Unwrap chain of w (the convention of
// http.ResponseController) to our writer.
func findWrapState(w http.ResponseWriter) *wrapState {
	for range 16 {
		if aw, ok := w.(*adaptWriter); ok {
			return aw.st
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return nil
		}
		w = u.Unwrap()
	}
	return nil
}

// newNetRequest builds the *http.Request for an adapted handler. Every string is
// copied into one allocation (the Context's strings are recycled when the handler
// returns; net/http handlers expect to keep theirs).
func newNetRequest(c *Context, ctx context.Context) (*http.Request, *adaptBody) {
	req := c.req
	method, target, path, host := c.method(), req.RequestURI, c.path(), req.Host
	n := len(method) + len(target) + len(path) + len(host)
	hdrs := 0
	for i := range req.Header {
		f := &req.Header[i]
		if skipRequestField(f.Name) {
			continue
		}
		hdrs++
		n += len(f.Name) + len(f.Value)
	}
	for i := 0; i < c.params.Len(); i++ {
		p := c.params.At(i)
		n += len(p.Key) + len(p.Value)
	}
	// The remote address is formatted into the same allocation when it is the
	// usual *net.TCPAddr.
	var abuf [64]byte
	var remote []byte
	remoteStr := ""
	if tcp, ok := req.RemoteAddr.(*net.TCPAddr); ok && tcp != nil {
		ap := tcp.AddrPort() // formatted as net.TCPAddr.String does (IPv4 unmapped)
		remote = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).AppendTo(abuf[:0])
	} else if req.RemoteAddr != nil {
		remoteStr = req.RemoteAddr.String()
	}
	n += len(remote)
	var sb strings.Builder
	sb.Grow(n)
	sb.Write(remote)
	sb.WriteString(method)
	sb.WriteString(target)
	sb.WriteString(path)
	sb.WriteString(host)
	for i := range req.Header {
		f := &req.Header[i]
		if skipRequestField(f.Name) {
			continue
		}
		sb.WriteString(f.Name)
		sb.WriteString(f.Value)
	}
	for i := 0; i < c.params.Len(); i++ {
		p := c.params.At(i)
		sb.WriteString(p.Key)
		sb.WriteString(p.Value)
	}
	a := arena{s: sb.String()}
	if len(remote) > 0 {
		remoteStr = a.take(len(remote))
	}
	method, target, path, host = a.take(len(method)), a.take(len(target)), a.take(len(path)), a.take(len(host))

	header := make(http.Header, hdrs)
	vals := make([]string, hdrs) // one backing array for single-valued fields, as net/textproto does
	vi := 0
	for i := range req.Header {
		f := &req.Header[i]
		if skipRequestField(f.Name) {
			continue
		}
		name, value := a.take(len(f.Name)), a.take(len(f.Value))
		if httpmsg.EqualFold(name, "Host") {
			if host == "" {
				host = value
			}
			continue // net/http moves Host to r.Host
		}
		key := textproto.CanonicalMIMEHeaderKey(name)
		if vs, ok := header[key]; ok {
			header[key] = append(vs, value)
			continue
		}
		vals[vi] = value
		header[key] = vals[vi : vi+1 : vi+1]
		vi++
	}

	if p, ok := c.isExtendedConnect(); ok {
		// RFC 8441: as net/http's HTTP/2 server presents an extended CONNECT
		// (with extended CONNECT enabled): Method CONNECT, the protocol in
		// r.Header[":protocol"], r.Body the client's bytes. Only a route marked
		// with Route.ExtendedConnect gets one (xconnect.go).
		header[":protocol"] = []string{strings.Clone(p)}
	}
	proto, major, minor := req.Proto, req.ProtoMajor, req.ProtoMinor
	if proto == "" {
		proto, major, minor = "HTTP/1.1", 1, 1
	}
	var base http.Request
	base.Method = method
	base.URL = requestURL(method, target, path, c.pathOverride != "")
	base.Proto, base.ProtoMajor, base.ProtoMinor = proto, major, minor
	base.Header = header
	base.Host = host
	if base.Host == "" && base.URL.Host != "" {
		base.Host = base.URL.Host
	}
	base.RequestURI = target
	base.ContentLength = req.ContentLength
	base.Close = req.Close
	base.RemoteAddr = remoteStr
	if vs, ok := header["Trailer"]; ok && req.ContentLength < 0 {
		// Declared request trailers: keys now, values once the body reached
		// io.EOF (net/http's fixTrailer; x/net's server does the same).
		base.Trailer = declaredTrailers(vs)
		delete(header, "Trailer")
	}
	base.TLS = req.TLS // nil over plaintext, as net/http has it
	var body *adaptBody
	if req.ContentLength == 0 && req.BodyReader == nil && len(req.Body) == 0 {
		base.Body = http.NoBody
	} else {
		body = &adaptBody{c: c}
		body.r = c.bodySource(&body.br)
		base.Body = body
	}
	r := base.WithContext(ctx)
	if body != nil {
		body.req = r
	}
	for i := 0; i < c.params.Len(); i++ {
		k := a.take(len(c.params.At(i).Key))
		v := a.take(len(c.params.At(i).Value))
		r.SetPathValue(k, v)
	}
	return r, body
}

// declaredTrailers returns the keys named by Trailer field values, with nil
// values, leaving out those net/http refuses as trailer keys.
func declaredTrailers(vs []string) http.Header {
	t := make(http.Header)
	for _, v := range vs {
		for key := range strings.SplitSeq(v, ",") {
			key = textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(key))
			switch key {
			case "", "Transfer-Encoding", "Trailer", "Content-Length":
				continue
			}
			t[key] = nil
		}
	}
	return t
}

// skipRequestField drops HTTP/2 pseudo-header fields should a protocol pass them.
func skipRequestField(name string) bool { return len(name) > 0 && name[0] == ':' }

// arena hands out consecutive substrings of one string.
type arena struct {
	s   string
	off int
}

func (a *arena) take(n int) string {
	s := a.s[a.off : a.off+n]
	a.off += n
	return s
}

// requestURL parses the request target as net/http's server does. When the path
// was rewritten (SetPath), or the target does not parse, the path comes from path.
func requestURL(method, target, path string, rewritten bool) *url.URL {
	var u *url.URL
	var err error
	if !rewritten && target != "" {
		raw := target
		if method == http.MethodConnect && !strings.HasPrefix(raw, "/") {
			// RFC 9110 §9.3.6: authority-form, "host:port".
			raw = "http://" + raw
		}
		u, err = url.ParseRequestURI(raw)
		if err == nil {
			if raw != target {
				u.Scheme = ""
			}
			return u
		}
	}
	u = &url.URL{Path: path}
	if p, err := url.PathUnescape(path); err == nil && p != path {
		u.Path, u.RawPath = p, path
	}
	if _, q, ok := strings.Cut(target, "?"); ok {
		u.RawQuery = q
	}
	return u
}

// bodySource returns the request body as a reader: the stream, the part already
// read by Body, or the buffered body (br, supplied by the caller, is filled then).
func (c *Context) bodySource(br *bytes.Reader) io.Reader {
	switch {
	case c.body != nil || c.bodyErr != nil:
		if c.bodyErr != nil {
			return errReader{c.bodyErr}
		}
		br.Reset(c.body)
		return br
	case c.req.BodyReader != nil:
		return c.req.BodyReader
	default:
		br.Reset(c.req.Body)
		return br
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// adaptBody is the http.Request.Body of an adapted request.
type adaptBody struct {
	c      *Context
	req    *http.Request
	r      io.Reader
	br     bytes.Reader
	mu     sync.Mutex  // serialises Close with the end of the handler
	closed atomic.Bool // closed by the handler, or the handler returned
	eof    bool
}

func (b *adaptBody) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, http.ErrBodyReadAfterClose
	}
	if b.eof {
		return 0, io.EOF
	}
	n, err := b.r.Read(p)
	if err == io.EOF {
		b.eof = true
		b.fillTrailer()
	}
	return n, err
}

// fillTrailer copies the request trailers, known once the body ended.
func (b *adaptBody) fillTrailer() {
	t := b.c.req.Trailer
	if len(t) == 0 {
		return
	}
	if b.req.Trailer == nil {
		b.req.Trailer = make(http.Header, len(t))
	}
	for _, f := range t {
		key := textproto.CanonicalMIMEHeaderKey(strings.Clone(f.Name))
		b.req.Trailer[key] = append(b.req.Trailer[key], strings.Clone(f.Value))
	}
}

// Close ends the body: later Reads fail with http.ErrBodyReadAfterClose, and a
// Read blocked on another goroutine returns with an error, as with net/http (a
// gRPC server reads from a goroutine of its own and closes the body to stop it).
// The rest of the body is the protocol's to drain or drop.
func (b *adaptBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Swap(true) {
		return nil
	}
	if cl, ok := b.r.(io.Closer); ok {
		_ = cl.Close() // the protocol's body reader (the Context is still alive)
	}
	return nil
}

// close marks the body closed once the handler returned (the Context is gone).
func (b *adaptBody) close() {
	if b != nil {
		b.mu.Lock()
		b.closed.Store(true)
		b.mu.Unlock()
	}
}

// adaptWriter is the http.ResponseWriter of Adapt and WrapMiddleware.
type adaptWriter struct {
	c      *Context
	st     *wrapState // set under WrapMiddleware
	header http.Header
	buf    []byte
	sw     *StreamWriter
	err    error // first error of the streamed response
	status int
	wrote  bool // status committed (WriteHeader or first Write)
	noBody bool // the status forbids a body (204, 304)
	head   bool // HEAD request: body bytes are counted, never sent
	done   bool // the response is finished or handed to the Celeris chain
	// switching: WriteHeader(101) came before a Hijack (adapt_hijack.go).
	switching bool
	// declared lists the trailer names of the Trailer field when the header was
	// sent (net/http's declareTrailer); their values are read at the end.
	declared []string
}

var adaptWriters = sync.Pool{New: func() any { return new(adaptWriter) }}

func acquireAdaptWriter(c *Context, head bool) *adaptWriter {
	w := adaptWriters.Get().(*adaptWriter)
	w.c, w.head = c, head
	return w
}

// releaseAdaptWriter recycles w with its buffer and header map (net/http handlers
// may not use the writer after they return).
func releaseAdaptWriter(w *adaptWriter) {
	buf := w.buf[:0]
	if cap(buf) > 2*adaptBufferSize {
		buf = nil
	}
	h := w.header
	if len(h) > 32 {
		h = nil
	}
	clear(h)
	clear(w.declared)
	*w = adaptWriter{buf: buf, header: h, declared: w.declared[:0]}
	adaptWriters.Put(w)
}

// Header returns the response header map. Changes after the header was sent
// (first flush or streamed write) have no effect, as in net/http.
func (w *adaptWriter) Header() http.Header {
	if w.header == nil {
		w.header = make(http.Header)
	}
	return w.header
}

// WriteHeader sets the status. A 1xx code other than 101 sends an informational
// response with the header's current fields, as net/http does; 101 is held for
// Hijack, which writes it (adapt_hijack.go); a second final status is ignored.
func (w *adaptWriter) WriteHeader(code int) {
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code == http.StatusSwitchingProtocols && !w.wrote && !w.done {
		w.switching = true // sent by Hijack (adapt_hijack.go)
		return
	}
	if w.wrote || w.done {
		return
	}
	if code < 200 {
		if code != http.StatusSwitchingProtocols {
			_ = w.c.writeInformational(code, netFields(w.header))
		}
		return
	}
	w.wrote, w.status = true, code
	w.noBody = code == http.StatusNoContent || code == http.StatusNotModified
}

func (w *adaptWriter) Write(p []byte) (int, error) {
	if err := w.beforeWrite(); err != nil {
		return 0, err
	}
	return w.write(p, "")
}

// WriteString avoids a copy for io.WriteString and fmt.Fprint* callers.
func (w *adaptWriter) WriteString(s string) (int, error) {
	if err := w.beforeWrite(); err != nil {
		return 0, err
	}
	return w.write(nil, s)
}

func (w *adaptWriter) beforeWrite() error {
	if w.done {
		return ErrResponseWritten
	}
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.noBody {
		return http.ErrBodyNotAllowed
	}
	if w.err != nil {
		return w.err
	}
	return nil
}

// write takes p or s (exactly one is used: p when s is "").
func (w *adaptWriter) write(p []byte, s string) (int, error) {
	n := len(p) + len(s)
	if len(w.buf)+n <= adaptBufferSize {
		w.buf = append(w.buf, p...)
		w.buf = append(w.buf, s...)
		return n, nil
	}
	if w.sw == nil {
		sniff := w.buf
		if len(sniff) == 0 {
			sniff = p
			if s != "" {
				sniff = []byte(s[:min(len(s), sniffLen)])
			}
		}
		if err := w.startStream(sniff); err != nil {
			return 0, err
		}
	}
	if w.head {
		return n, nil // no body on the wire; nothing to keep
	}
	// Push the buffer and, when it is large, p itself; then hand the bytes to the
	// connection so that they never pile up in the protocol.
	if len(w.buf) > 0 {
		if _, err := w.sw.Write(w.buf); err != nil {
			return 0, w.fail(err)
		}
		w.buf = w.buf[:0]
	}
	switch {
	case n < adaptBufferSize:
		w.buf = append(w.buf, p...)
		w.buf = append(w.buf, s...)
	case s == "":
		if _, err := w.sw.Write(p); err != nil {
			return 0, w.fail(err)
		}
	default:
		for rest := s; rest != ""; {
			k := min(len(rest), adaptBufferSize)
			w.buf = append(w.buf[:0], rest[:k]...)
			rest = rest[k:]
			if _, err := w.sw.Write(w.buf); err != nil {
				return 0, w.fail(err)
			}
		}
		w.buf = w.buf[:0]
	}
	if err := w.sw.Flush(); err != nil {
		return 0, w.fail(err)
	}
	return n, nil
}

// sniffLen is how many bytes http.DetectContentType looks at.
const sniffLen = 512

func (w *adaptWriter) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// Flush sends the header and what was written so far (http.Flusher).
func (w *adaptWriter) Flush() { _ = w.FlushError() }

// FlushError is Flush with an error (used by http.ResponseController).
func (w *adaptWriter) FlushError() error {
	if w.done {
		return nil
	}
	if w.err != nil {
		return w.err
	}
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.sw == nil {
		if err := w.startStream(w.buf); err != nil {
			return err
		}
	}
	if len(w.buf) > 0 && !w.head {
		if _, err := w.sw.Write(w.buf); err != nil {
			return w.fail(err)
		}
	}
	w.buf = w.buf[:0]
	if err := w.sw.Flush(); err != nil {
		return w.fail(err)
	}
	return nil
}

// startStream sends the header of a streamed response; sniff is the start of the
// body, for Content-Type detection.
func (w *adaptWriter) startStream(sniff []byte) error {
	w.declareTrailers()
	copyNetHeader(w.c, w.header, sniff, !w.noBody)
	sw, err := w.c.Stream(w.status, "")
	if err != nil {
		return w.fail(err)
	}
	w.sw = sw
	return nil
}

// finish completes the response once the handler returned.
func (w *adaptWriter) finish() error {
	if w.done {
		return nil
	}
	w.done = true
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	if w.sw == nil {
		w.declareTrailers()
		if len(w.declared) == 0 && !w.hasPrefixTrailers() {
			copyNetHeader(w.c, w.header, w.buf, !w.noBody)
			return w.c.Blob(w.status, "", w.buf)
		}
		// Trailers follow the body: stream it (chunked on HTTP/1.1, as net/http
		// sends a response with declared trailers).
		if err := w.startStream(w.buf); err != nil {
			return err
		}
	}
	if w.err == nil && len(w.buf) > 0 && !w.head {
		_, _ = w.sw.Write(w.buf) // the protocol ends the stream after the handler
	}
	w.setTrailers()
	return w.err
}

// EnableFullDuplex lets the handler read the request body while it writes the
// response (http.ResponseController). Celeris never stops a handler from reading
// its body once the response started, on either protocol, so this only says yes.
func (w *adaptWriter) EnableFullDuplex() error { return nil }

// declareTrailers records the trailer names of the Trailer field (once, when the
// header is sent), leaving out the fields that may not be trailers.
func (w *adaptWriter) declareTrailers() {
	if len(w.declared) > 0 {
		return
	}
	for _, v := range w.header["Trailer"] {
		for key := range strings.SplitSeq(v, ",") {
			key = textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(key))
			if !httpmsg.ForbiddenTrailer(key) {
				w.declared = append(w.declared, key)
			}
		}
	}
}

// hasPrefixTrailers reports http.TrailerPrefix keys in the header.
func (w *adaptWriter) hasPrefixTrailers() bool {
	for k := range w.header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			return true
		}
	}
	return false
}

// setTrailers hands the final trailers to the Context, which ends the stream
// with them (net/http's finalTrailers: TrailerPrefix keys, then the declared
// names' values).
func (w *adaptWriter) setTrailers() {
	for k, vs := range w.header {
		name, ok := strings.CutPrefix(k, http.TrailerPrefix)
		if !ok {
			continue
		}
		for _, v := range vs {
			w.c.AddTrailer(name, sanitizeFieldValue(v))
		}
	}
	for _, k := range w.declared {
		for _, v := range w.header[k] {
			w.c.AddTrailer(k, sanitizeFieldValue(v))
		}
	}
}

// netFields converts h to fields (an informational response's), leaving out
// those Adapt drops from responses.
func netFields(h http.Header) []httpmsg.Field {
	var fields []httpmsg.Field
	for k, vs := range h {
		if dropResponseField(k) {
			continue
		}
		for _, v := range vs {
			fields = append(fields, httpmsg.Field{Name: k, Value: sanitizeFieldValue(v)})
		}
	}
	return fields
}

// copyNetHeader moves the fields of h to c's response header, replacing fields of
// the same name set earlier on c (Set-Cookie fields are added to them instead). Framing fields are Celeris's and are dropped (see
// Adapt). When sniff is set and neither h nor c has a Content-Type, it is detected
// from body, as net/http does.
func copyNetHeader(c *Context, h http.Header, body []byte, sniff bool) {
	fresh := len(c.header) == 0
	for k, vs := range h {
		if dropResponseField(k) {
			continue
		}
		if !fresh && k != "Set-Cookie" { // cookies add up; other fields replace
			c.DelHeader(k)
		}
		for _, v := range vs {
			c.AddHeader(k, sanitizeFieldValue(v))
		}
	}
	if !sniff || len(body) == 0 {
		return
	}
	if _, ok := h["Content-Type"]; ok {
		return // set, or set to nil to prevent sniffing
	}
	if len(h["Content-Encoding"]) > 0 && h["Content-Encoding"][0] != "" {
		return // golang.org/issue/31753: do not sniff encoded bodies
	}
	if c.ResponseHeader("Content-Type") == "" {
		c.SetHeader("Content-Type", http.DetectContentType(body))
	}
}

// dropResponseField reports fields an adapted handler may not set: framing is
// Celeris's, and RFC 9113 §8.2.2 forbids connection-specific fields in HTTP/2.
func dropResponseField(k string) bool {
	switch k {
	case "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
		"Proxy-Connection", "Upgrade", "Date":
		return true
	}
	return strings.HasPrefix(k, http.TrailerPrefix)
}

// sanitizeFieldValue replaces CR and LF with spaces, as net/http does for response
// headers (response splitting), instead of dropping the field.
func sanitizeFieldValue(v string) string {
	if strings.IndexByte(v, '\r') < 0 && strings.IndexByte(v, '\n') < 0 {
		return v
	}
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' {
			return ' '
		}
		return r
	}, v))
}
