// Package humaceleris runs huma v2 (github.com/danielgtaylor/huma/v2) APIs on
// Celeris: its operations become Celeris routes, and huma's handlers read the
// request and write the answer through a huma.Context over *celeris.Context.
//
//	s := celeris.New(celeris.Config{Addr: ":8080"})
//	api := humaceleris.New(s, huma.DefaultConfig("My API", "1.0.0"))
//	huma.Get(api, "/greeting/{name}", greet)
//	s.Start()
//
// An answer is collected while huma writes it and sent when the handler
// returns, as one response with its length (Context.Blob), unless huma
// flushes it (a stream, server-sent events): from the first Flush it is
// streamed (Context.Stream). Route middleware of Celeris applies as to any
// route; huma's own middleware runs inside it.
package humaceleris

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/queryparam"

	"github.com/celeris-dev/celeris"
)

// MultipartMaxMemory is how much of a multipart form is held in memory when
// huma reads one (the rest goes to temporary files).
var MultipartMaxMemory int64 = 8 << 10

// Router is where operations are registered: a *celeris.Server or a
// *celeris.Group (its prefix and middleware apply).
type Router interface {
	Handle(method, pattern string, h celeris.HandlerFunc, mw ...celeris.MiddlewareFunc) *celeris.Route
}

// Unwrap returns the Celeris context under a huma context made by this
// adapter (through huma.WithContext and other wrappers); it panics for
// another adapter's context.
func Unwrap(ctx huma.Context) *celeris.Context {
	for {
		if c, ok := ctx.(interface{ Unwrap() huma.Context }); ok {
			ctx = c.Unwrap()
			continue
		}
		break
	}
	if c, ok := ctx.(*hctx); ok {
		return c.c
	}
	panic("humaceleris: not a humaceleris context")
}

// hctx is the huma.Context of one request; pooled.
type hctx struct {
	op     *huma.Operation
	c      *celeris.Context
	status int
	buf    bytes.Buffer
	stream *celeris.StreamWriter // set from the first Flush
	err    error                 // the first failed write
}

var _ huma.Context = (*hctx)(nil)

var pool = sync.Pool{New: func() any { return new(hctx) }}

func (h *hctx) Operation() *huma.Operation { return h.op }
func (h *hctx) Context() context.Context   { return h.c.Context() }
func (h *hctx) Method() string             { return h.c.Method() }
func (h *hctx) Host() string               { return h.c.Host() }
func (h *hctx) TLS() *tls.ConnectionState  { return h.c.TLS() }

func (h *hctx) RemoteAddr() string {
	if a := h.c.RemoteAddr(); a != nil {
		return a.String()
	}
	return ""
}

func (h *hctx) URL() url.URL {
	u, err := url.ParseRequestURI(h.c.RequestURI())
	if err != nil || u == nil {
		return url.URL{Path: h.c.Path(), RawQuery: h.c.RawQuery()}
	}
	return *u
}

func (h *hctx) Version() huma.ProtoVersion {
	p := h.c.Proto()
	v := huma.ProtoVersion{Proto: p}
	switch p {
	case "HTTP/1.0":
		v.ProtoMajor, v.ProtoMinor = 1, 0
	case "HTTP/1.1":
		v.ProtoMajor, v.ProtoMinor = 1, 1
	case "HTTP/2.0", "HTTP/2":
		v.ProtoMajor = 2
	case "HTTP/3.0", "HTTP/3":
		v.ProtoMajor = 3
	}
	return v
}

// Param is the path parameter, decoded (Context.Param).
func (h *hctx) Param(name string) string { return h.c.Param(name) }

func (h *hctx) Query(name string) string { return queryparam.Get(h.c.RawQuery(), name) }

func (h *hctx) Header(name string) string { return h.c.Header(name) }

func (h *hctx) EachHeader(cb func(name, value string)) { h.c.VisitHeaders(cb) }

func (h *hctx) BodyReader() io.Reader { return h.c.BodyReader() }

func (h *hctx) GetMultipartForm() (*multipart.Form, error) {
	return h.c.MultipartForm(MultipartMaxMemory)
}

// SetReadDeadline is not offered per request: the server's timeouts
// (Config.ReadTimeout) bound the body.
func (h *hctx) SetReadDeadline(time.Time) error { return http.ErrNotSupported }

func (h *hctx) SetStatus(code int) { h.status = code }

func (h *hctx) Status() int { return h.status }

func (h *hctx) AppendHeader(name, value string) { h.c.AddHeader(name, value) }

func (h *hctx) SetHeader(name, value string) { h.c.SetHeader(name, value) }

func (h *hctx) BodyWriter() io.Writer { return (*bodyWriter)(h) }

// bodyWriter collects the answer; Flush starts streaming it.
type bodyWriter hctx

func (w *bodyWriter) Write(p []byte) (int, error) {
	if w.stream != nil {
		n, err := w.stream.Write(p)
		if err != nil && w.err == nil {
			w.err = err
		}
		return n, err
	}
	return w.buf.Write(p)
}

// Flush sends what was written, and streams what follows (http.Flusher, as
// huma's SSE support and streaming handlers use it).
func (w *bodyWriter) Flush() {
	h := (*hctx)(w)
	if h.stream == nil {
		s, err := h.c.Stream(h.code(), h.c.ResponseHeader("Content-Type"))
		if err != nil {
			h.err = err
			return
		}
		h.stream = s
		if h.buf.Len() > 0 {
			if _, err := s.Write(h.buf.Bytes()); err != nil {
				h.err = err
			}
			h.buf.Reset()
		}
	}
	if err := h.stream.Flush(); err != nil && h.err == nil {
		h.err = err
	}
}

// SetWriteDeadline is accepted and not enforced (huma's SSE sets one before
// each event): Celeris has no per-write deadline; it bounds what a slow
// client makes the server hold (a write past the output bound waits) and
// ends the request's context when the client leaves.
func (w *bodyWriter) SetWriteDeadline(time.Time) error { return nil }

func (h *hctx) code() int {
	if h.status == 0 {
		return http.StatusOK
	}
	return h.status
}

// finish sends the collected answer.
func (h *hctx) finish() error {
	if h.stream != nil || h.c.Written() {
		return h.err
	}
	return h.c.Blob(h.code(), h.c.ResponseHeader("Content-Type"), h.buf.Bytes())
}

type adapter struct {
	r Router
	s *celeris.Server // for ServeHTTP; nil when r is a Group of an unknown server
}

// Handle registers op as a Celeris route ("/items/{id}" is "/items/:id").
func (a *adapter) Handle(op *huma.Operation, handler func(huma.Context)) {
	a.r.Handle(op.Method, pattern(op.Path), func(c *celeris.Context) error {
		h := pool.Get().(*hctx)
		h.op, h.c = op, c
		handler(h)
		err := h.finish()
		h.op, h.c, h.status, h.stream, h.err = nil, nil, 0, nil, nil
		if h.buf.Cap() <= 64<<10 {
			h.buf.Reset()
			pool.Put(h)
		}
		return err
	})
}

// ServeHTTP serves a net/http request through the server (Server.ServeHTTP),
// as humatest does.
func (a *adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if a.s == nil {
		http.Error(w, "humaceleris: ServeHTTP needs the API built with New on a *celeris.Server", http.StatusInternalServerError)
		return
	}
	a.s.ServeHTTP(w, r)
}

// pattern turns huma's path template into a Celeris pattern: {name} is
// :name, and a trailing {name...} is *name.
func pattern(p string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			b.WriteString(p)
			return b.String()
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			b.WriteString(p)
			return b.String()
		}
		b.WriteString(p[:i])
		name := p[i+1 : i+j]
		if n, ok := strings.CutSuffix(name, "..."); ok {
			b.WriteString("*" + n)
		} else {
			b.WriteString(":" + name)
		}
		p = p[i+j+1:]
	}
}

// NewAdapter returns a huma.Adapter that registers operations on r (a
// *celeris.Server, or a *celeris.Group whose server is s for ServeHTTP; s
// may be nil when ServeHTTP is not used).
func NewAdapter(r Router, s *celeris.Server) huma.Adapter {
	if srv, ok := r.(*celeris.Server); ok && s == nil {
		s = srv
	}
	return &adapter{r: r, s: s}
}

// New returns a huma API whose operations are routes of s.
func New(s *celeris.Server, config huma.Config) huma.API {
	return huma.NewAPI(config, NewAdapter(s, nil))
}

// NewWithGroup returns a huma API whose operations are routes of g (under
// its prefix, inside its middleware) on server s.
func NewWithGroup(s *celeris.Server, g *celeris.Group, config huma.Config) huma.API {
	return huma.NewAPI(config, NewAdapter(g, s))
}
