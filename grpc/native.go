package celerisgrpc

import (
	"net/http"
	"strings"
	"sync"

	"github.com/celeris-dev/celeris"
)

// An rpc is not recycled: the request context holds it (grpc.SetHeader finds
// it there) and user code may keep that context. Its buffers are.
type rpcBufs struct {
	out, in []byte
	fields  []field
}

var bufPool = sync.Pool{New: func() any { return new(rpcBufs) }}

// maxPooledBuf is the largest buffer kept for the next call.
const maxPooledBuf = 64 << 10

func acquireRPC() *rpc {
	b := bufPool.Get().(*rpcBufs)
	r := &rpc{out: b.out, bufs: b}
	r.mr.buf = b.in
	return r
}

// releaseRPC returns r's buffers once the RPC has ended.
func releaseRPC(r *rpc) {
	b := r.bufs
	b.out, b.in = r.out[:0], r.mr.buf[:0]
	clear(b.fields) // keep no request's strings alive
	b.fields = b.fields[:0]
	if cap(b.out) > maxPooledBuf {
		b.out = nil
	}
	if cap(b.in) > maxPooledBuf {
		b.in = nil
	}
	r.out, r.mr.buf, r.bufs = nil, nil, nil
	bufPool.Put(b)
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
		path:        c.Path(),
		contentType: ct,
		authority:   c.Host(),
		timeout:     c.Header("grpc-timeout"),
		encoding:    c.Header("grpc-encoding"),
		remote:      c.RemoteAddr(),
		tls:         c.TLS(),
		body:        c.BodyReader(),
		stopping:    c.ShuttingDown(),
	}
	fields := r.bufs.fields[:0]
	c.VisitHeaders(func(k, v string) { fields = append(fields, field{lowerKey(k), v}) })
	req.fields, r.bufs.fields = fields, fields
	s.serve(r, c.Context(), &req)
	releaseRPC(r)
	return nil
}

// lowerKey returns k in lower case (HTTP/2 field names already are).
func lowerKey(k string) string {
	for i := 0; i < len(k); i++ {
		if 'A' <= k[i] && k[i] <= 'Z' {
			return strings.ToLower(k)
		}
	}
	return k
}
