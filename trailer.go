package celeris

// Response trailers and informational (1xx) responses.
//
// Trailers are fields sent after the body (RFC 9110 §6.5): on HTTP/2 a last
// HEADERS frame with END_STREAM, on HTTP/1.1 the trailer section of a chunked
// body. A response that carries trailers is therefore streamed: on HTTP/1.1 it is
// sent chunked even when its body is known whole (as net/http does), so that the
// trailers are not lost. An HTTP/1.0 client, which has no chunked coding, gets
// none. Fields RFC 9110 §6.5.1 keeps out of trailers (framing, routing,
// authentication, controls, content format) are dropped by the writers.

import (
	"maps"
	"net/http"
	"strings"

	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// SetTrailer sets the response trailer name to value, replacing values set
// earlier under that name (any case). Trailers leave after the body.
//
// When to call it: for a streamed response (Stream, SSE), any time before the
// handler returns; for a complete response (Blob, String, JSON, NoContent...),
// before writing it, since that sends the whole response. Names set before the
// response head is written are announced in a Trailer header field (RFC 9110
// §6.6.2). Setting a trailer makes a complete response go out streamed (chunked
// on HTTP/1.1, without Content-Length). name must be a valid field name; fields
// that may not be trailers (httpfield.ForbiddenTrailer: Content-Length,
// Content-Type, Set-Cookie, Authorization, Cache-Control, ...) are dropped.
func (c *Context) SetTrailer(name, value string) {
	c.touched |= tTrailer
	j := 0
	for _, f := range c.trailer {
		if !httpmsg.EqualFold(f.Name, name) {
			c.trailer[j] = f
			j++
		}
	}
	httpmsg.ClearFields(c.trailer[j:])
	c.trailer = append(c.trailer[:j], httpmsg.Field{Name: name, Value: value})
}

// AddTrailer adds value to the response trailer name; see SetTrailer.
func (c *Context) AddTrailer(name, value string) {
	c.touched |= tTrailer
	c.trailer = append(c.trailer, httpmsg.Field{Name: name, Value: value})
}

// resetTrailers empties the trailers for the Context's next use.
func (c *Context) resetTrailers() {
	httpmsg.ClearFields(c.trailer)
	if cap(c.trailer) > 32 {
		c.trailer = nil
	} else {
		c.trailer = c.trailer[:0]
	}
}

// declareTrailers announces the trailer names set so far in a Trailer field,
// unless the handler set one itself.
func (c *Context) declareTrailers() {
	if len(c.trailer) == 0 || c.ResponseHeader("Trailer") != "" {
		return
	}
	var b strings.Builder
	for i, f := range c.trailer {
		if httpfield.ForbiddenTrailer(f.Name) {
			continue
		}
		dup := false
		for _, g := range c.trailer[:i] {
			dup = dup || httpmsg.EqualFold(f.Name, g.Name)
		}
		if dup {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name)
	}
	if b.Len() > 0 {
		c.AddHeader("Trailer", b.String())
	}
}

// blobWithTrailers sends a complete response that has trailers: streamed, so that
// the trailers can follow the body; the server ends it with them after the
// handler returned.
func (c *Context) blobWithTrailers(code int, b []byte) error {
	c.declareTrailers()
	if err := c.w.WriteHeader(code, c.header); err != nil {
		return err
	}
	c.streaming = true
	if len(b) > 0 {
		if _, err := c.w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// WriteInformational sends an informational (1xx) response ahead of the final
// one, such as 103 Early Hints with Link fields:
//
//	_ = c.WriteInformational(http.StatusEarlyHints, http.Header{"Link": {"</app.css>; rel=preload; as=style"}})
//
// It may be called several times, and only before the final response is written
// (else ErrResponseWritten). code must be 100-199 and not 101
// (ErrInformationalStatus): a protocol switch belongs to Upgrade, and HTTP/2 has
// none. On HTTP/1.1 it leaves as an interim status line and fields, on HTTP/2 as
// HEADERS without END_STREAM; an HTTP/1.0 client gets nothing (RFC 9110 §15.2)
// and the call returns nil. The fields are not added to the final response.
func (c *Context) WriteInformational(code int, header http.Header) error {
	if !httpmsg.ValidInformational(code) {
		return ErrInformationalStatus
	}
	var fields []httpmsg.Field
	for k, vs := range header {
		for _, v := range vs {
			fields = append(fields, httpmsg.Field{Name: k, Value: v})
		}
	}
	return c.writeInformational(code, fields)
}

func (c *Context) writeInformational(code int, fields []httpmsg.Field) error {
	if c.written {
		return ErrResponseWritten
	}
	iw, ok := c.w.(httpmsg.InformationalWriter)
	if !ok {
		return nil // a writer without interim responses (a test double)
	}
	return iw.WriteInformational(code, fields)
}

// WriteInformational sends an interim response through net/http's writer
// (httpmsg.InformationalWriter) when Celeris handlers run under net/http:
// net/http sends 1xx with the header map's fields at that moment, so the map
// holds exactly the given fields for the call and is restored afterwards.
func (nw *netWriter) WriteInformational(status int, header []httpmsg.Field) error {
	if !httpmsg.ValidInformational(status) {
		return httpmsg.ErrInformational
	}
	if nw.answered {
		return ErrResponseWritten
	}
	h := nw.w.Header()
	saved := maps.Clone(h)
	clear(h)
	for _, f := range header {
		h.Add(f.Name, f.Value)
	}
	nw.w.WriteHeader(status)
	clear(h)
	maps.Copy(h, saved)
	return nil
}
