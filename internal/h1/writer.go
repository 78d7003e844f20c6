package h1

import (
	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Continue100 is the interim response "HTTP/1.1 100 Continue" with its empty line
// (RFC 9110 §15.2.1). It is shared: never modify it.
var Continue100 = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// CloseDelimited as AppendHead's bodyLen writes no framing field: the body ends when
// the server closes the connection (HTTP/1.0 clients, which lack chunked coding).
const CloseDelimited = -2

// AppendHead appends the status line and header section of an HTTP/1.1 response
// (RFC 9112 §4-§6) to dst and returns the extended slice. It allocates nothing when
// dst has room.
//
// The section holds, in order: Date (always, RFC 9110 §6.6.1); the caller's fields;
// the framing field; the Connection field; the empty line. The writer owns Date,
// Content-Length, Transfer-Encoding and Connection: caller fields with those names
// are dropped, except Connection on a 1xx response (a 101 needs "Connection:
// Upgrade"). A caller field whose name is not a token or whose value holds CR, LF or
// NUL is dropped too: that is response splitting (CWE-113), where a value smuggles
// its own fields or a second response.
//
// Framing: a 1xx, 204 or 304 response gets no framing field (RFC 9110 §8.6, RFC 9112
// §6.1: never Content-Length or Transfer-Encoding on 1xx/204; a 304's Content-Length
// would describe the selected representation, which we do not know). Otherwise
// bodyLen >= 0 writes "Content-Length: bodyLen" and bodyLen < 0 writes
// "Transfer-Encoding: chunked": the body follows as AppendChunk calls ended by
// AppendLastChunk.
//
// close writes "Connection: close" (RFC 9112 §9.6); otherwise keepAlive10 writes
// "Connection: keep-alive", which an HTTP/1.0 client that asked for a persistent
// connection needs to see (RFC 9112 §9.3). Neither applies to a 1xx response, which
// is not the end of the exchange.
func AppendHead(dst []byte, status int, header []httpmsg.Field, bodyLen int64, close bool, keepAlive10 bool) []byte {
	return AppendHeadCached(dst, status, header, bodyLen, close, keepAlive10, nil)
}

// AppendHeadCached is AppendHead with a ValidCache (nil: none).
func AppendHeadCached(dst []byte, status int, header []httpmsg.Field, bodyLen int64, close bool, keepAlive10 bool, vc *ValidCache) []byte {
	if status < 100 || status > 999 {
		status = 500 // as AppendStatusLine writes it
	}
	dst = AppendStatusLine(dst, status)
	dst = append(dst, "Date: "...)
	dst = append(dst, bytesconv.Date()...)
	dst = append(dst, "\r\n"...)
	informational := status < 200
	dst = appendFields(dst, header, informational, vc)
	switch {
	case informational || status == 204 || status == 304:
	case bodyLen >= 0:
		dst = append(dst, "Content-Length: "...)
		dst = bytesconv.AppendUint(dst, uint64(bodyLen))
		dst = append(dst, "\r\n"...)
	case bodyLen == CloseDelimited:
		// RFC 9112 §6.3 rule 8: the body ends when the connection closes.
	default:
		dst = append(dst, "Transfer-Encoding: chunked\r\n"...)
	}
	switch {
	case informational:
	case close:
		dst = append(dst, "Connection: close\r\n"...)
	case keepAlive10:
		dst = append(dst, "Connection: keep-alive\r\n"...)
	}
	return append(dst, "\r\n"...)
}

// appendFields appends the fields that are safe to write and not owned by the writer.
func appendFields(dst []byte, fields []httpmsg.Field, allowConnection bool, vc *ValidCache) []byte {
	for i := range fields {
		f := &fields[i]
		line, ok := vc.valid(i, f.Name, f.Value)
		if !ok {
			continue
		}
		switch len(f.Name) {
		case 4:
			if equalLowerString(f.Name, "date") {
				continue
			}
		case 10:
			if !allowConnection && equalLowerString(f.Name, "connection") {
				continue
			}
		case 14:
			if equalLowerString(f.Name, "content-length") {
				continue
			}
		case 17:
			if equalLowerString(f.Name, "transfer-encoding") {
				continue
			}
		}
		if line != nil {
			dst = append(dst, line...) // "name: value\r\n" as the cache keeps it
			continue
		}
		dst = append(dst, f.Name...)
		dst = append(dst, ": "...)
		dst = append(dst, f.Value...)
		dst = append(dst, "\r\n"...)
	}
	return dst
}

// ValidCache remembers, per field position, the last name and value that passed
// appendFields' checks, as an owned copy of the field line they make ("name:
// value\r\n", each of up to validLen bytes): a response whose fields repeat the
// previous one's (the common case: the same content type, the same Vary) compares
// them instead of scanning them again, and writes the line in one copy. Only
// contents are compared, never addresses, so a caller's buffer changing under a
// string cannot make an unchecked value pass. A value that changed volatileAfter
// times in a row (a request id, a per-response ETag) is scanned from then on
// without comparing and copying it, until another field name takes its position.
// The zero value is ready; one goroutine at a time.
type ValidCache struct {
	slots [validSlots]validSlot
}

const (
	validSlots    = 8
	validLen      = 40
	volatileAfter = 4
)

// validSlot holds the line of a name of n-1 bytes (n == 0: no name kept) and a
// value of v-1 bytes (v == 0: no value kept): line[:n-1] is the name, then ": ",
// the value and CRLF. misses counts the changes of the value in a row.
type validSlot struct {
	n, v   uint8
	misses uint8
	line   [2*validLen + 4]byte
}

func (s *validSlot) hasName(name string) bool {
	return int(s.n) == len(name)+1 && string(s.line[:s.n-1]) == name
}

// setName keeps name (and ": ") when it fits, and forgets the value.
func (s *validSlot) setName(name string) {
	s.n, s.v, s.misses = 0, 0, 0
	if len(name) > validLen {
		return
	}
	k := copy(s.line[:], name)
	s.line[k], s.line[k+1] = ':', ' '
	s.n = uint8(k + 1)
}

func (s *validSlot) hasValue(value string) bool {
	if s.v == 0 || int(s.v) != len(value)+1 {
		return false
	}
	off := int(s.n) + 1 // after the name and ": "
	return string(s.line[off:off+len(value)]) == value
}

// setValue keeps value (and CRLF) after the name, when both fit.
func (s *validSlot) setValue(value string) {
	s.v = 0
	if s.n == 0 || len(value) > validLen {
		return
	}
	off := int(s.n) + 1
	k := off + copy(s.line[off:], value)
	s.line[k], s.line[k+1] = '\r', '\n'
	s.v = uint8(len(value) + 1)
}

// valid reports whether the field at position i may be written
// (httpfield.ValidResponseField: its name is a token and its value holds no CR,
// LF or NUL). When the slot keeps both, line is
// the field line to write (valid until the next call on vc), else nil. vc may be
// nil.
func (vc *ValidCache) valid(i int, name, value string) (line []byte, ok bool) {
	if vc == nil || i >= validSlots {
		return nil, httpfield.ValidName(name) && httpfield.ValidValue(value)
	}
	s := &vc.slots[i]
	if !s.hasName(name) {
		if !httpfield.ValidName(name) {
			return nil, false
		}
		s.setName(name) // another field: its values may repeat
	}
	switch {
	case s.misses >= volatileAfter:
		return nil, httpfield.ValidValue(value)
	case s.hasValue(value):
		s.misses = 0
	default:
		if !httpfield.ValidValue(value) {
			return nil, false
		}
		s.setValue(value)
		s.misses++
	}
	if s.v == 0 {
		return nil, true
	}
	return s.line[:int(s.n)+int(s.v)+2], true
}

// equalLowerString is equalLower for a string.
func equalLowerString(a, s string) bool {
	return equalLower(bytesconv.S2B(a), s)
}

// AppendChunk appends p as one chunk: "<hex length>\r\n<p>\r\n" (RFC 9112 §7.1). An
// empty p appends nothing, since a zero-length chunk would end the body.
func AppendChunk(dst, p []byte) []byte {
	if len(p) == 0 {
		return dst
	}
	dst = bytesconv.AppendHex(dst, uint64(len(p)))
	dst = append(dst, "\r\n"...)
	dst = append(dst, p...)
	return append(dst, "\r\n"...)
}

// AppendLastChunk appends the last chunk, the trailer fields and the final empty
// line: "0\r\n<trailers>\r\n" (RFC 9112 §7.1.2). Trailers are sanitized as in
// AppendHead, and the fields RFC 9110 §6.5.1 keeps out of trailers (framing,
// routing, authentication, controls, content format: httpfield.ForbiddenTrailer)
// are dropped.
func AppendLastChunk(dst []byte, trailer []httpmsg.Field) []byte {
	dst = append(dst, "0\r\n"...)
	for i := range trailer {
		if httpfield.ForbiddenTrailer(trailer[i].Name) {
			continue
		}
		dst = appendFields(dst, trailer[i:i+1], false, nil)
	}
	return append(dst, "\r\n"...)
}

// AppendInformational appends an interim response: status line, the caller's
// fields (checked as AppendHead's; no Date, framing or Connection field) and the
// empty line (RFC 9110 §15.2, RFC 9112 §4).
func AppendInformational(dst []byte, status int, header []httpmsg.Field) []byte {
	dst = AppendStatusLine(dst, status)
	for i := range header {
		if equalLowerString(header[i].Name, "connection") {
			continue
		}
		dst = appendFields(dst, header[i:i+1], false, nil)
	}
	return append(dst, "\r\n"...)
}

// AppendError appends a complete response refusing a request for e: status line,
// Date, fields (checked and filtered as AppendHead's), "Content-Type: text/plain;
// charset=utf-8", Content-Length, "Connection: close", and e.Reason as the body. The
// connection must be closed after it. A nil e is answered as 500.
func AppendError(dst []byte, e *Error, fields []httpmsg.Field) []byte {
	status, reason := 500, "internal server error"
	if e != nil {
		status, reason = e.Status, e.Reason
	}
	return AppendErrorBody(dst, status, fields, "text/plain; charset=utf-8", bytesconv.S2B(reason))
}

// AppendErrorBody is AppendError with the given Content-Type and body (a
// Config.RefusalBody's). A content type that is empty or not a valid field value
// is left out.
func AppendErrorBody(dst []byte, status int, fields []httpmsg.Field, contentType string, body []byte) []byte {
	dst = AppendStatusLine(dst, status)
	dst = append(dst, "Date: "...)
	dst = append(dst, bytesconv.Date()...)
	dst = append(dst, "\r\n"...)
	dst = appendFields(dst, fields, false, nil)
	if contentType != "" && httpfield.ValidValue(contentType) {
		dst = append(dst, "Content-Type: "...)
		dst = append(dst, contentType...)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "Content-Length: "...)
	dst = bytesconv.AppendUint(dst, uint64(len(body)))
	dst = append(dst, "\r\nConnection: close\r\n\r\n"...)
	return append(dst, body...)
}
