package celeris

// Celeris handlers under net/http.
//
// Life of a net/http request through ServeHTTP: the server's chains are composed
// once (as Start does); the *http.Request is translated into the protocol-neutral
// httpmsg.Request (fields copied by reference: net/http's strings are immutable)
// and the http.ResponseWriter is wrapped in an httpmsg.ResponseWriter (netWriter);
// then Prepare and Serve run exactly as under the Celeris engine, on the net/http
// handler goroutine. Both structures come from a pool and go back after Serve.

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"strconv"
	"strings"
	"sync"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// ServeHTTP serves a net/http request with the server's routes, middleware,
// error handler and not-found/405 answers, so that a Server is an http.Handler:
// under http.Server (HTTP/1.1, TLS, HTTP/2, h2c via http.Server.Protocols), in
// net/http/httptest, or mounted in an http.ServeMux.
//
// The first call composes the middleware chains, as Start does: routes and
// middleware must be registered before it. Handlers see the request as under the
// Celeris engine, with these differences: header fields come in net/http's map
// order, not arrival order; the body streams from r.Body, limited to
// Config.MaxRequestBodySize (a larger declared Content-Length is answered with 413
// before routing); Inline routes run on the calling goroutine like all others.
// Responses keep Celeris's framing: no Content-Type sniffing, Content-Length for
// complete responses, streaming with http.Flusher (through
// http.ResponseController) for streamed ones, and trailers through
// http.TrailerPrefix.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.freezeForNetHTTP()
	limit := s.cfg.MaxRequestBodySize
	if r.ContentLength > limit {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	x := netExchanges.Get().(*netExchange)
	x.fill(r, limit)
	x.rw.w, x.rw.head, x.rw.ctx = w, r.Method == http.MethodHead, r.Context()
	s.prepare(&x.req)
	s.serve(&x.req, &x.rw)
	x.rw.finish()
	x.release()
}

// Handler composes the server's middleware chains, as Start does, and returns the
// server as an http.Handler (see ServeHTTP). No route or middleware may be added
// afterwards. Calling it is optional: the first ServeHTTP does the same.
func (s *Server) Handler() http.Handler {
	s.freezeForNetHTTP()
	return s
}

// freezeForNetHTTP composes the chains once per server, before the first request,
// without racing Start (which freezes under s.mu too).
func (s *Server) freezeForNetHTTP() {
	s.freezeOnce.Do(func() {
		s.mu.Lock()
		s.freeze()
		s.mu.Unlock()
	})
}

// netExchange is one net/http request in Celeris form.
type netExchange struct {
	req  httpmsg.Request
	body netBody
	rw   netWriter
	hdr  [16]httpmsg.Field
}

var netExchanges = sync.Pool{New: func() any {
	x := new(netExchange)
	x.req.Header = x.hdr[:0]
	return x
}}

// fill translates r. net/http's strings are immutable, so they are used as they are.
func (x *netExchange) fill(r *http.Request, limit int64) {
	m := &x.req
	m.Method = r.Method
	m.Path = r.URL.EscapedPath()
	m.RawQuery = r.URL.RawQuery
	m.RequestURI = r.RequestURI
	if m.RequestURI == "" {
		m.RequestURI = r.URL.RequestURI()
	}
	m.Proto, m.ProtoMajor, m.ProtoMinor = r.Proto, r.ProtoMajor, r.ProtoMinor
	if m.Proto == "" {
		m.Proto, m.ProtoMajor, m.ProtoMinor = "HTTP/1.1", 1, 1
	}
	m.Host = r.Host
	m.Scheme = "http"
	if r.TLS != nil {
		m.Scheme = "https"
	}
	m.TLS = r.TLS
	if r.Host != "" {
		// net/http moves Host out of the header; Celeris keeps it there, as received.
		m.Header = append(m.Header, httpmsg.Field{Name: "Host", Value: r.Host})
	}
	for k, vs := range r.Header {
		for _, v := range vs {
			m.Header = append(m.Header, httpmsg.Field{Name: k, Value: v})
		}
	}
	m.ContentLength = r.ContentLength
	if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
		x.body = netBody{r: r, m: m, limit: limit}
		m.BodyReader = &x.body
	} else {
		m.ContentLength = 0
	}
	m.RemoteAddr = parseRemoteAddr(r.RemoteAddr)
	m.Close = r.Close
}

func (x *netExchange) release() {
	x.req.Reset()
	if cap(x.req.Header) > 4*len(x.hdr) {
		x.req.Header = x.hdr[:0]
	}
	clear(x.hdr[:])
	x.body = netBody{}
	x.rw = netWriter{}
	netExchanges.Put(x)
}

// parseRemoteAddr turns net/http's "ip:port" into a *net.TCPAddr, as the engine
// gives; anything else (a pipe, a test value) keeps its text.
func parseRemoteAddr(s string) net.Addr {
	if s == "" {
		return nil
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return net.TCPAddrFromAddrPort(ap)
	}
	return textAddr(s)
}

// textAddr is a net.Addr known only by its text.
type textAddr string

func (a textAddr) Network() string { return "tcp" }
func (a textAddr) String() string  { return string(a) }

// netBody streams r.Body, enforces the body limit and, at EOF, copies r.Trailer to
// the Celeris request.
type netBody struct {
	r     *http.Request
	m     *httpmsg.Request
	limit int64
	n     int64
	eof   bool
}

func (b *netBody) Read(p []byte) (int, error) {
	if b.eof {
		return 0, io.EOF
	}
	if b.n > b.limit {
		return 0, errBodyTooLarge()
	}
	if rem := b.limit + 1 - b.n; int64(len(p)) > rem {
		p = p[:rem] // read at most one byte past the limit, to detect it
	}
	n, err := b.r.Body.Read(p)
	b.n += int64(n)
	if b.n > b.limit {
		return n - int(b.n-b.limit), errBodyTooLarge()
	}
	if err == io.EOF {
		b.eof = true
		for k, vs := range b.r.Trailer {
			for _, v := range vs {
				b.m.Trailer = append(b.m.Trailer, httpmsg.Field{Name: k, Value: v})
			}
		}
	}
	return n, err
}

func errBodyTooLarge() error {
	return NewHTTPError(http.StatusRequestEntityTooLarge, "request body too large")
}

// netWriter is the httpmsg.ResponseWriter over an http.ResponseWriter.
type netWriter struct {
	w         http.ResponseWriter
	ctx       context.Context // the net/http request's
	head      bool
	answered  bool
	streaming bool
	ended     bool
}

// Context is the net/http request's context (httpmsg.ContextWriter).
func (nw *netWriter) Context() context.Context { return nw.ctx }

// setHeader copies fields to the net/http header. The fields are borrowed for the
// call only and the header map may outlive it (httptest.ResponseRecorder keeps it),
// so the strings are copied, all into one allocation.
func (nw *netWriter) setHeader(fields []httpmsg.Field, prefix string) http.Header {
	h := nw.w.Header()
	n := 0
	for i := range fields {
		n += len(fields[i].Name) + len(fields[i].Value)
	}
	var sb strings.Builder
	sb.Grow(n)
	for i := range fields {
		sb.WriteString(fields[i].Name)
		sb.WriteString(fields[i].Value)
	}
	a := arena{s: sb.String()}
	for i := range fields {
		name, value := a.take(len(fields[i].Name)), a.take(len(fields[i].Value))
		key := textproto.CanonicalMIMEHeaderKey(name)
		switch key {
		case "Content-Length", "Transfer-Encoding", "Connection", "Date":
			continue // framing is the writer's (httpmsg.ResponseWriter)
		}
		h[prefix+key] = append(h[prefix+key], value)
	}
	return h
}

func (nw *netWriter) WriteResponse(status int, header []httpmsg.Field, body []byte) error {
	if nw.answered {
		return ErrResponseWritten
	}
	nw.answered = true
	h := nw.setHeader(header, "")
	allowed := bodyAllowedForStatus(status)
	if allowed {
		if _, ok := h["Content-Type"]; !ok {
			h["Content-Type"] = nil // Celeris does not sniff
		}
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	nw.w.WriteHeader(status)
	if !allowed || nw.head || len(body) == 0 {
		return nil
	}
	_, err := nw.w.Write(body)
	return err
}

func (nw *netWriter) WriteHeader(status int, header []httpmsg.Field) error {
	if nw.answered {
		return ErrResponseWritten
	}
	nw.answered, nw.streaming = true, true
	h := nw.setHeader(header, "")
	if _, ok := h["Content-Type"]; !ok && bodyAllowedForStatus(status) {
		h["Content-Type"] = nil
	}
	nw.w.WriteHeader(status)
	return nil
}

func (nw *netWriter) Write(p []byte) (int, error) {
	if !nw.streaming || nw.ended {
		return 0, http.ErrBodyNotAllowed
	}
	if nw.head {
		return len(p), nil
	}
	return nw.w.Write(p)
}

func (nw *netWriter) Flush() error {
	if !nw.streaming || nw.ended {
		return http.ErrBodyNotAllowed
	}
	err := http.NewResponseController(nw.w).Flush()
	if err == http.ErrNotSupported {
		return nil // the bytes still arrive, when the writer sends them
	}
	return err
}

func (nw *netWriter) End(trailer []httpmsg.Field) error {
	if !nw.streaming || nw.ended {
		return http.ErrBodyNotAllowed
	}
	nw.ended = true
	if len(trailer) > 0 {
		nw.setHeader(trailer, http.TrailerPrefix)
	}
	return nil
}

// finish makes sure the request got a complete answer after Serve.
func (nw *netWriter) finish() {
	switch {
	case !nw.answered:
		_ = nw.WriteResponse(http.StatusInternalServerError, nil, []byte(http.StatusText(http.StatusInternalServerError)))
	case nw.streaming && !nw.ended:
		_ = nw.End(nil)
	}
}

// bodyAllowedForStatus: RFC 9110 §15.2, §15.3.5, §15.4.5: 1xx, 204 and 304 have no
// content.
func bodyAllowedForStatus(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}
