package celeris

import (
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"sync"

	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

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
			if !httpfield.ForbiddenTrailer(key) {
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
// Celeris's, and RFC 9113 §8.2.2 forbids connection-specific fields in HTTP/2
// (httpfield.ConnectionSpecific).
func dropResponseField(k string) bool {
	switch k {
	case "Content-Length", "Date":
		return true
	}
	return httpfield.ConnectionSpecific(k) || strings.HasPrefix(k, http.TrailerPrefix)
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
