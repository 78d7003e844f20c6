package celeris

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"

	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// errHijackWritten: net/http lets a handler hijack after writing; Celeris only
// before (or after WriteHeader(101), the WebSocket libraries' way).
var errHijackWritten = errors.New("celeris: Hijack after the response was written")

// Hijack implements http.Hijacker for Adapt on HTTP/1.1 (on HTTP/2 it reports
// http.ErrNotSupported, as net/http's HTTP/2 server has no Hijacker): the
// connection leaves the engine, with the bytes the client sent past this request
// in the returned reader, and the handler serves it from then on. A 101 set with
// WriteHeader before is written first (coder/websocket's Accept does that).
// The route must run on a worker (not Inline).
func (w *adaptWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.c.w.(httpmsg.Hijacker)
	if !ok || w.c.req.ProtoMajor != 1 {
		return nil, nil, http.ErrNotSupported
	}
	if w.done || w.wrote || len(w.buf) > 0 || w.c.written {
		return nil, nil, errHijackWritten
	}
	nc, in, pending, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	w.done = true
	w.c.written = true
	w.c.status = http.StatusSwitchingProtocols
	if w.switching {
		pending = appendSwitchingHead(pending, w.c, w.header)
	}
	if len(pending) > 0 {
		if _, err := nc.Write(pending); err != nil {
			_ = nc.Close()
			return nil, nil, err
		}
	}
	var r io.Reader = nc
	if len(in) > 0 {
		r = io.MultiReader(bytes.NewReader(in), nc)
	}
	return nc, bufio.NewReadWriter(bufio.NewReader(r), bufio.NewWriter(nc)), nil
}

// appendSwitchingHead appends a 101 response head with the fields set on the
// Context (middleware) and on h.
func appendSwitchingHead(dst []byte, c *Context, h http.Header) []byte {
	dst = append(dst, "HTTP/1.1 101 Switching Protocols\r\n"...)
	add := func(k, v string) {
		// The head is written raw: the field rules every writer applies
		// (httpfield) are applied here, after the net/http adapter's own
		// rewriting of CR and LF (sanitizeFieldValue).
		if v = sanitizeFieldValue(v); !httpfield.ValidResponseField(k, v) {
			return
		}
		dst = append(dst, k...)
		dst = append(dst, ": "...)
		dst = append(dst, v...)
		dst = append(dst, "\r\n"...)
	}
	for _, f := range c.header {
		if _, set := h[http.CanonicalHeaderKey(f.Name)]; !set {
			add(f.Name, f.Value)
		}
	}
	for k, vs := range h {
		for _, v := range vs {
			add(k, v)
		}
	}
	return append(dst, "\r\n"...)
}
