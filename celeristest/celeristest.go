// Package celeristest runs Celeris handlers in tests without a network.
//
// Do sends a Request through a whole Server (routing, middleware, error handler,
// 404 and 405 answers) and returns the Response a client would have seen; Run and
// RunRoute do the same for a single HandlerFunc, on a throwaway server:
//
//	s := celeris.New(celeris.Config{})
//	s.GET("/hello/:name", hello)
//	resp := celeristest.Do(s, celeristest.NewRequest("GET", "/hello/gopher", nil))
//	if resp.Status != 200 || resp.Text() != "hello gopher" { ... }
//
// The request goes through the same seam the HTTP/1.1 and HTTP/2 protocols use
// (Server.Prepare and Server.Serve), on the calling goroutine, with an in-memory
// response writer; nothing listens and the server need not be started. The
// response is recorded as it would appear on the wire: a HEAD request, or a 1xx,
// 204 or 304 status, gets no body, and a complete response gets a Content-Length.
// Date is not recorded.
//
// Serve and Start run a server over real sockets for a test; package
// github.com/celeris-dev/celeris/celeristest/browser drives headless Chromium
// against it (cookies, CSRF, CSP, HTTP/2 and HTTP/3 as a browser meets them).
package celeristest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/hook"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Request describes a request to send. Build it with NewRequest, then adjust the
// fields or use the With methods.
type Request struct {
	Method string
	// Target is the request target: "/path?query" (origin form), "*", or an
	// absolute URL ("http://example.com/path"), whose host becomes Host.
	Target  string
	Header  http.Header
	Body    io.Reader   // read whole before the handler runs; nil for none
	Trailer http.Header // request trailers, visible once the body was read

	Host       string // "example.com" unless the target or Header names one
	RemoteAddr string // "192.0.2.1:1234" (TEST-NET-1, as net/http/httptest uses)
	Proto      string // "HTTP/1.1"; "HTTP/1.0" and "HTTP/2.0" are possible
	Ctx        context.Context
}

// NewRequest returns a request for method and target with the given body. An
// empty method means GET.
func NewRequest(method, target string, body io.Reader) *Request {
	if method == "" {
		method = http.MethodGet
	}
	return &Request{
		Method:     method,
		Target:     target,
		Header:     make(http.Header),
		Body:       body,
		RemoteAddr: "192.0.2.1:1234",
		Proto:      "HTTP/1.1",
	}
}

// WithHeader adds a header field and returns r.
func (r *Request) WithHeader(name, value string) *Request {
	if r.Header == nil {
		r.Header = make(http.Header)
	}
	r.Header.Add(name, value)
	return r
}

// WithContext sets the request's context.Context and returns r.
func (r *Request) WithContext(ctx context.Context) *Request {
	r.Ctx = ctx
	return r
}

// Response is what a client would have received.
type Response struct {
	Status   int
	Header   http.Header // canonical names; Content-Length for complete responses
	Body     []byte
	Trailer  http.Header // trailers of a streamed response
	Streamed bool        // the handler streamed the response (Context.Stream)
	Flushes  int         // Flush calls on a streamed response
}

// Text returns the body as a string.
func (r *Response) Text() string { return string(r.Body) }

// DecodeJSON decodes the body into v.
func (r *Response) DecodeJSON(v any) error { return json.Unmarshal(r.Body, v) }

// Do sends req through s and returns the response. Like Start, the first Do (or
// s.Handler, or s.ServeHTTP) composes the server's middleware chains: register
// routes and middleware before it. It panics when req is malformed (a target that
// does not parse, an unreadable body), as net/http/httptest.NewRequest does.
func Do(s *celeris.Server, req *Request) *Response {
	s.Handler() // compose the chains once
	msg := req.message()
	rec := &recorder{head: msg.Method == http.MethodHead, resp: &Response{Header: make(http.Header)}, ctx: req.Ctx}
	h := hook.Handler(s)
	h.Prepare(msg)
	h.Serve(msg, rec)
	if !rec.answered {
		panic("celeristest: the server did not answer")
	}
	if rec.streaming && !rec.ended {
		_ = rec.End(nil) // the protocols end a stream when the handler returns
	}
	return rec.resp
}

// Run serves req with h alone, registered for req's method under "/*path" on a
// throwaway server with the default Config, inside mw (outermost first).
func Run(h celeris.HandlerFunc, req *Request, mw ...celeris.MiddlewareFunc) *Response {
	return RunRoute("/*path", h, req, mw...)
}

// RunRoute is Run with the route's pattern, so that h finds its parameters
// (c.Param) as in production: RunRoute("/users/:id", h, req). A request whose
// path the pattern does not match gets the server's 404.
func RunRoute(pattern string, h celeris.HandlerFunc, req *Request, mw ...celeris.MiddlewareFunc) *Response {
	s := celeris.New(celeris.Config{})
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	s.Handle(method, pattern, h, mw...)
	return Do(s, req)
}

// message builds the protocol-neutral request.
func (r *Request) message() *httpmsg.Request {
	m := &httpmsg.Request{Method: r.Method, Scheme: "http"}
	if m.Method == "" {
		m.Method = http.MethodGet
	}
	target := r.Target
	if target == "" {
		target = "/"
	}
	var u *url.URL
	var err error
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		u, err = url.Parse(target)
		if err == nil {
			if u.Scheme == "https" {
				// As httptest.NewRequest: a stand-in TLS state, so that c.TLS()
				// is non-nil as over a real TLS connection.
				m.Scheme = "https"
				m.TLS = &tls.ConnectionState{Version: tls.VersionTLS12, HandshakeComplete: true, ServerName: u.Hostname()}
			}
			m.Host = u.Host
			m.RequestURI = u.RequestURI()
		}
	} else {
		u, err = url.ParseRequestURI(target)
		m.RequestURI = target
	}
	if err != nil {
		panic(fmt.Sprintf("celeristest: invalid target %q: %v", target, err))
	}
	m.Path, m.RawQuery = u.EscapedPath(), u.RawQuery
	if target == "*" {
		m.Path = "*"
	}
	if h := r.Header.Get("Host"); h != "" {
		m.Host = h
	}
	if r.Host != "" {
		m.Host = r.Host
	}
	if m.Host == "" {
		m.Host = "example.com"
	}
	m.Proto = r.Proto
	switch m.Proto {
	case "HTTP/1.0":
		m.ProtoMajor, m.ProtoMinor = 1, 0
	case "HTTP/2.0":
		m.ProtoMajor, m.ProtoMinor = 2, 0
	default:
		m.Proto, m.ProtoMajor, m.ProtoMinor = "HTTP/1.1", 1, 1
	}
	m.Header = append(m.Header, httpmsg.Field{Name: "Host", Value: m.Host})
	for k, vs := range r.Header {
		if textproto.CanonicalMIMEHeaderKey(k) == "Host" {
			continue
		}
		for _, v := range vs {
			m.Header = append(m.Header, httpmsg.Field{Name: k, Value: v})
		}
	}
	for k, vs := range r.Trailer {
		for _, v := range vs {
			m.Trailer = append(m.Trailer, httpmsg.Field{Name: k, Value: v})
		}
	}
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			panic("celeristest: reading the request body: " + err.Error())
		}
		m.Body = b
	}
	m.ContentLength = int64(len(m.Body))
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		m.RemoteAddr = net.TCPAddrFromAddrPort(ap)
	}
	return m
}

// recorder is the in-memory httpmsg.ResponseWriter.
type recorder struct {
	ctx       context.Context // the Request's (WithContext), nil: context.Background
	resp      *Response
	head      bool
	answered  bool
	streaming bool
	ended     bool
	noBody    bool
}

var errAnswered = errors.New("celeristest: response already written")

func (w *recorder) start(status int, header []httpmsg.Field) error {
	if w.answered {
		return errAnswered
	}
	w.answered = true
	w.resp.Status = status
	w.noBody = w.head || status < 200 || status == http.StatusNoContent || status == http.StatusNotModified
	addFields(w.resp.Header, header)
	return nil
}

// addFields copies the fields a connection would send: those whose name is not a
// token or whose value holds CR, LF or NUL are dropped, as the HTTP/1.1 and HTTP/2
// writers drop them.
func addFields(h http.Header, fields []httpmsg.Field) {
	for _, f := range fields {
		if !httpfield.ValidResponseField(f.Name, f.Value) {
			continue
		}
		k := textproto.CanonicalMIMEHeaderKey(strings.Clone(f.Name))
		switch k {
		case "Content-Length", "Transfer-Encoding", "Connection", "Date":
			continue // the writer's own (httpmsg.ResponseWriter)
		}
		h[k] = append(h[k], strings.Clone(f.Value))
	}
}

// Context is the request's context (httpmsg.ContextWriter): the one
// Request.WithContext set, or context.Background.
func (w *recorder) Context() context.Context {
	if w.ctx == nil {
		return context.Background()
	}
	return w.ctx
}

func (w *recorder) WriteResponse(status int, header []httpmsg.Field, body []byte) error {
	if err := w.start(status, header); err != nil {
		return err
	}
	if status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified {
		w.resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	if !w.noBody {
		w.resp.Body = bytes.Clone(body)
	}
	return nil
}

func (w *recorder) WriteHeader(status int, header []httpmsg.Field) error {
	if err := w.start(status, header); err != nil {
		return err
	}
	w.streaming = true
	w.resp.Streamed = true
	return nil
}

// WriteHeaderLength starts a streamed response of known length
// (httpmsg.SizedWriter): Content-Length is set as a connection sends it.
func (w *recorder) WriteHeaderLength(status int, header []httpmsg.Field, length int64) error {
	if err := w.WriteHeader(status, header); err != nil {
		return err
	}
	if length >= 0 && status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified {
		w.resp.Header.Set("Content-Length", strconv.FormatInt(length, 10))
	}
	return nil
}

func (w *recorder) Write(p []byte) (int, error) {
	if !w.streaming || w.ended {
		return 0, errAnswered
	}
	if !w.noBody {
		w.resp.Body = append(w.resp.Body, p...)
	}
	return len(p), nil
}

func (w *recorder) Flush() error {
	if !w.streaming || w.ended {
		return errAnswered
	}
	w.resp.Flushes++
	return nil
}

func (w *recorder) End(trailer []httpmsg.Field) error {
	if !w.streaming || w.ended {
		return errAnswered
	}
	w.ended = true
	if len(trailer) > 0 {
		w.resp.Trailer = make(http.Header, len(trailer))
		addFields(w.resp.Trailer, trailer)
	}
	return nil
}
