package celeris

import (
	"bytes"
	"context"
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

	header, host := netHeader(req, &a, hdrs, host)
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

// netHeader builds the http.Header of req's hdrs fields that skipRequestField
// keeps, taking each name and value from a, where newNetRequest copied them in
// that order. Host moves to r.Host as net/http does: host is returned, or the Host
// field's value when host is empty.
func netHeader(req *httpmsg.Request, a *arena, hdrs int, host string) (http.Header, string) {
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
	return header, host
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
