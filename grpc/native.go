package celerisgrpc

import (
	"net/http"
	"sync"

	"github.com/celeris-dev/celeris"
)

// rpcs recycles rpc values and their buffers between calls.
var rpcs = sync.Pool{New: func() any { return new(rpc) }}

// maxPooledBuf is the largest buffer an rpc keeps for the next call.
const maxPooledBuf = 64 << 10

func acquireRPC() *rpc { return rpcs.Get().(*rpc) }

func releaseRPC(r *rpc) {
	out, in := r.out, r.mr.buf
	if cap(out) > maxPooledBuf {
		out = nil
	}
	if cap(in) > maxPooledBuf {
		in = nil
	}
	*r = rpc{out: out[:0]}
	r.mr.buf = in[:0]
	rpcs.Put(r)
}

// ServeCeleris serves one RPC on c (celeris.NativeHandler): celeris.Adapt(srv)
// and srv.Handler() return it. The route must run on a worker goroutine (the
// default; not Inline). Requests that are not gRPC get the HTTP answers the
// gRPC over HTTP/2 spec names: 405 for a method other than POST, 415 for a
// content-type other than application/grpc[+proto], 505 below HTTP/2.
func (s *Server) ServeCeleris(c *celeris.Context) error {
	if c.Method() != http.MethodPost {
		c.SetHeader("Allow", http.MethodPost)
		return c.String(http.StatusMethodNotAllowed, "invalid gRPC request method "+c.Method())
	}
	ct := c.Header("content-type")
	if !validContentType(ct) {
		return c.String(http.StatusUnsupportedMediaType, "invalid gRPC request content-type")
	}
	if c.Proto() != "HTTP/2.0" {
		return c.String(http.StatusHTTPVersionNotSupported, "gRPC requires HTTP/2")
	}
	r := acquireRPC()
	r.c = c
	req := request{
		method:      http.MethodPost,
		path:        c.Path(),
		contentType: ct,
		authority:   c.Host(),
		timeout:     c.Header("grpc-timeout"),
		encoding:    c.Header("grpc-encoding"),
		remote:      c.RemoteAddr(),
		tls:         c.TLS(),
		body:        c.BodyReader(),
		visit:       c.VisitHeaders,
	}
	s.serve(r, c.Context(), &req)
	releaseRPC(r)
	return nil
}
