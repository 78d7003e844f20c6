package celeris

// What a net/http middleware under WrapMiddleware changes reaches the Celeris
// chain after it.
//
// Request: runWrappedNext compares the *http.Request the middleware passed to
// next with the one it was given (kept, with the strings it started with, in
// wrapState) and applies each difference to the Context: the URL path
// (SetPath: before routing, in Pre middleware, the router sees it), the query,
// the method (SetMethod), Host, RemoteAddr (so ClientIP sees what a RealIP
// middleware found), the header fields, and the body (a body replaced by
// http.MaxBytesReader is what Body, BodyReader, forms and Bind read from then
// on, with its limit: 413). Changes stay for the rest of the request.
//
// Response: when the middleware passes next a ResponseWriter of its own (a
// wrapper that compresses, counts bytes or records the status), the Celeris
// chain's complete response is captured and written through that wrapper, so
// the wrapper sees and may transform it; an error the chain returns is answered
// by the error handler inside the capture, so its answer passes through the
// wrapper too. A streamed response (Stream, SSE) cannot be captured: it goes to
// the client directly, the wrapper sees only its status, and a warning is
// logged (once per server) so that the bypass is not silent.

import (
	"errors"
	"io"
	"net/http"
	"net/textproto"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// netOrig is the request a WrapMiddleware link handed to the middleware, with the
// values it started with (the middleware may change them in place).
type netOrig struct {
	req    *http.Request
	path   string
	query  string
	method string
	host   string
	remote string
	body   io.ReadCloser
}

func (o *netOrig) set(r *http.Request) {
	*o = netOrig{req: r, path: r.URL.EscapedPath(), query: r.URL.RawQuery, method: r.Method,
		host: r.Host, remote: r.RemoteAddr, body: r.Body}
}

// applyNetRequest applies to c what the middleware changed in r (see above).
func (c *Context) applyNetRequest(o *netOrig, r *http.Request) {
	if p := r.URL.EscapedPath(); p != o.path {
		c.SetPath(p) // in Pre middleware, routing (routeAndRun) sees it
	}
	if r.URL.RawQuery != o.query {
		c.req.RawQuery = r.URL.RawQuery
		c.qparsed = false
		clear(c.query)
		c.query = c.query[:0]
	}
	if r.Method != o.method {
		c.SetMethod(r.Method)
	}
	if r.Host != o.host {
		c.req.Host = r.Host
	}
	if r.RemoteAddr != o.remote {
		c.req.RemoteAddr = parseRemoteAddr(r.RemoteAddr)
	}
	if !sameHeader(c.req.Header, r.Header) {
		host := c.req.Host
		fields := c.req.Header[:0]
		if host != "" {
			fields = append(fields, httpmsg.Field{Name: "Host", Value: host})
		}
		for k, vs := range r.Header {
			for _, v := range vs {
				fields = append(fields, httpmsg.Field{Name: k, Value: v})
			}
		}
		if old := c.req.Header; len(fields) < len(old) {
			httpmsg.ClearFields(old[len(fields):])
		}
		c.req.Header = fields
	}
	if r.Body != o.body {
		body := r.Body
		if body == nil {
			body = http.NoBody
		}
		c.req.Body, c.req.BodyReader = nil, &netBodyReader{r: body}
		c.req.ContentLength = r.ContentLength
		if r.ContentLength == 0 && body != http.NoBody {
			c.req.ContentLength = -1
		}
		c.body, c.bodyErr = nil, nil
		o.body = r.Body
	}
}

// sameHeader reports whether h holds exactly the fields of f (Host aside, which
// net/http keeps out of its header map).
func sameHeader(f []httpmsg.Field, h http.Header) bool {
	n := 0
	for _, vs := range h {
		n += len(vs)
	}
	m := 0
	for i := range f {
		if httpmsg.EqualFold(f[i].Name, "Host") || skipRequestField(f[i].Name) {
			continue
		}
		m++
		vs := h[textproto.CanonicalMIMEHeaderKey(f[i].Name)]
		found := false
		for _, v := range vs {
			if v == f[i].Value {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return n == m
}

// netBodyReader reads a body a net/http middleware put in place; the 413 of an
// http.MaxBytesReader becomes a 413 *HTTPError, as the server's own limit is.
type netBodyReader struct{ r io.Reader }

func (b *netBodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	var mbe *http.MaxBytesError
	if err != nil && errors.As(err, &mbe) {
		err = &HTTPError{Code: http.StatusRequestEntityTooLarge, Message: "request body too large", Err: err}
	}
	return n, err
}

// serveThrough runs the rest of the chain and writes its complete response
// through w, the middleware's own ResponseWriter (see above).
func serveThrough(c *Context, next HandlerFunc, w http.ResponseWriter) error {
	var chainErr error
	status, body, ok, err := c.CaptureResponse(func(c *Context) error {
		err := next(c)
		if err != nil && !c.written && !c.errored {
			c.Error(err) // answered now, inside the capture, through w below
		}
		chainErr = err
		return nil
	})
	if err != nil {
		return err
	}
	if !ok {
		if c.streaming && !c.server.streamBypassLogged.Swap(true) {
			// Not silent: the wrapper (compression, say) did not see this body.
			c.server.logger.Warn("celeris: WrapMiddleware: a streamed response went to the client directly, past the ResponseWriter the net/http middleware passed on (only complete responses go through it)",
				"method", c.Method(), "route", c.RoutePattern())
		}
		if c.written && c.status >= 100 && c.status <= 999 {
			w.WriteHeader(c.status) // streamed: the wrapper sees the status only
		}
		return chainErr
	}
	h := w.Header()
	for _, f := range c.header {
		k := textproto.CanonicalMIMEHeaderKey(f.Name)
		h[k] = append(h[k], f.Value)
	}
	c.ResetHeaders()
	w.WriteHeader(status)
	if len(body) > 0 {
		_, _ = w.Write(body)
	}
	return chainErr
}
