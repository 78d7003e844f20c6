package celerish3

import (
	"strconv"

	"github.com/celeris-dev/celeris/httpfield"
	httpmsg "github.com/celeris-dev/celeris/transport"
)

// errFieldsTooLarge reports a field section over the server's
// SETTINGS_MAX_FIELD_SECTION_SIZE (RFC 9114 §4.2.2): the request is answered
// 431 (RFC 6585 §5).
var errFieldsTooLarge = streamErr(ErrCodeExcessiveLoad, "field section too large")

// malformed is a malformed request (RFC 9114 §4.1.2): "Malformed requests or
// responses that are detected MUST be treated as a stream error of type
// H3_MESSAGE_ERROR."
func malformed(reason string) error { return streamErr(ErrCodeMessage, reason) }

// decodeFields decodes a field section (decodeSection: the static table and
// literals, whose bytes go to arena; nil means a new one) and calls fn for
// each field. The section's decoded size, each field's name and value plus 32
// bytes (RFC 9114 §4.2.2), may not exceed maxSize. The strings fn gets view
// arena: valid until its reset.
func decodeFields(block []byte, maxSize uint64, arena *fieldArena, fn func(name, value string) error) error {
	if arena == nil {
		arena = new(fieldArena)
	}
	var size uint64
	return decodeSection(block, arena, func(name, value string) error {
		size += uint64(len(name)+len(value)) + 32
		if size > maxSize {
			return errFieldsTooLarge
		}
		return fn(name, value)
	})
}

// decodeRequestHead decodes the header section of a request into req (its
// strings view arena) and checks
// it against RFC 9114 §4.2 and §4.3.1; a request that breaks a rule is
// malformed (H3_MESSAGE_ERROR).
func decodeRequestHead(block []byte, req *httpmsg.Request, maxSize uint64, arena *fieldArena) error {
	var h httpfield.RequestHead
	contentLength := int64(-1)
	err := decodeFields(block, maxSize, arena, func(name, value string) error {
		// §4.2, §4.3: the field's syntax and place (pseudo-header fields
		// first, once each; no connection-specific field; TE only as
		// "trailers"). :protocol is defined (RFC 9220 §3) since the server
		// sends SETTINGS_ENABLE_CONNECT_PROTOCOL.
		if msg := h.Field(name, value, true); msg != "" {
			return malformed(msg)
		}
		if name[0] == ':' {
			return nil
		}
		if name == "content-length" {
			// Digits only (no sign, no underscore: base 10), at most 2^62.
			n, err := strconv.ParseUint(value, 10, 63)
			if err != nil || n > 1<<62 || (contentLength >= 0 && contentLength != int64(n)) {
				return malformed("bad content-length")
			}
			contentLength = int64(n)
		}
		req.Header = append(req.Header, httpmsg.Field{Name: name, Value: value})
		return nil
	})
	if err != nil {
		return err
	}
	// §4.3.1, §4.4: the pseudo-header fields as a whole, and :authority and
	// Host ("MUST contain the same value").
	if msg := h.Check(true); msg != "" {
		return malformed(msg)
	}
	req.Method, req.Scheme, req.RequestURI = h.Method, h.Scheme, h.Path
	req.Path, req.RawQuery = h.PathQuery()
	req.Host = h.HostValue()
	req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/3.0", 3, 0
	req.ContentLength = contentLength
	if h.Protocol != "" {
		// As on HTTP/2: the protocol reaches the handler as a field (net/http's
		// r.Header[":protocol"]), and the stream is a tunnel.
		req.Header = append(req.Header, httpmsg.Field{Name: ":protocol", Value: h.Protocol})
	}
	return nil
}

// decodeTrailers decodes a trailer section into req.Trailer (RFC 9114 §4.1).
func decodeTrailers(block []byte, req *httpmsg.Request, maxSize uint64, arena *fieldArena) error {
	return decodeFields(block, maxSize, arena, func(name, value string) error {
		// §4.3: "Pseudo-header fields MUST NOT appear in trailer sections";
		// §4.2: nor connection-specific fields.
		if msg := httpfield.CheckRequestTrailer(name, value); msg != "" {
			return malformed(msg)
		}
		req.Trailer = append(req.Trailer, httpmsg.Field{Name: name, Value: value})
		return nil
	})
}

// fieldEncoder encodes field sections with the static table and literals
// (RFC 9204 §4.5): the server never inserts into a dynamic table, so it opens
// no encoder stream traffic and no section can block. A :status in the static
// table is an indexed field line; other fields are literals with a static name
// reference where the table has the name, else with a literal name; strings
// are sent without Huffman coding (RFC 9204 §4.1.2 leaves it to the encoder:
// it saves a few bytes per field and costs more CPU than the bytes do). Its
// buffer is reused across the sections of one stream; not safe for
// concurrent use.
type fieldEncoder struct {
	buf []byte // the encoded section being built
}

// staticName maps a name of the QPACK static table to its first index.
var staticName = func() map[string]uint64 {
	m := make(map[string]uint64, len(qpackStatic))
	for i := len(qpackStatic) - 1; i >= 0; i-- {
		m[qpackStatic[i].name] = uint64(i)
	}
	return m
}()

// staticStatus returns the static table index of ":status: code", or -1.
func staticStatus(code int) int {
	switch code {
	case 103:
		return 24
	case 200:
		return 25
	case 304:
		return 26
	case 404:
		return 27
	case 503:
		return 28
	case 100:
		return 63
	case 204:
		return 64
	case 206:
		return 65
	case 302:
		return 66
	case 400:
		return 67
	case 403:
		return 68
	case 421:
		return 69
	case 425:
		return 70
	case 500:
		return 71
	}
	return -1
}

// appendPrefixInt appends v as a prefixed integer (RFC 9204 §4.1.1) whose
// prefix is the low n bits of a first byte carrying the bits of first.
func appendPrefixInt(dst []byte, first byte, n uint, v uint64) []byte {
	max := uint64(1)<<n - 1
	if v < max {
		return append(dst, first|byte(v))
	}
	dst = append(dst, first|byte(max))
	v -= max
	for v >= 0x80 {
		dst = append(dst, byte(v)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}

// field appends a literal field line (RFC 9204 §4.5.4 with a static name
// reference, else §4.5.6), without Huffman coding and with N clear.
func (e *fieldEncoder) field(name, value string) {
	if idx, ok := staticName[name]; ok {
		e.buf = appendPrefixInt(e.buf, 0x50, 4, idx) // 01 N=0 T=1 (static)
	} else {
		e.buf = appendPrefixInt(e.buf, 0x20, 3, uint64(len(name))) // 001 N=0 H=0
		e.buf = append(e.buf, name...)
	}
	e.buf = appendPrefixInt(e.buf, 0x00, 7, uint64(len(value))) // H=0
	e.buf = append(e.buf, value...)
}

// appendHeaders appends a HEADERS frame carrying status (when > 0), the valid
// fields of header, the Date field when date is set and content-length when
// contentLength >= 0. Names are sent in lower case (RFC 9114 §4.2); fields the
// writer owns (content-length, date), connection-specific ones and invalid
// ones (ValidResponseField) are left out, and, for a trailer section (status
// 0), those ForbiddenTrailer names.
func (e *fieldEncoder) appendHeaders(dst []byte, status int, header []httpmsg.Field, date bool, contentLength int64) []byte {
	// §4.5.1: Required Insert Count 0 and Base 0, as no field line references
	// a dynamic table.
	e.buf = append(e.buf[:0], 0, 0)
	var lower [64]byte
	if status > 0 {
		if idx := staticStatus(status); idx >= 0 {
			e.buf = appendPrefixInt(e.buf, 0xc0, 6, uint64(idx)) // 1 T=1 (static)
		} else {
			var sb [3]byte
			e.field(":status", b2s(strconv.AppendInt(sb[:0], int64(status), 10)))
		}
	}
	for _, f := range header {
		if !httpfield.ValidResponseField(f.Name, f.Value) {
			continue
		}
		name := f.Name
		if !isLower(name) {
			b := lower[:0]
			if len(name) > len(lower) {
				b = make([]byte, 0, len(name))
			}
			for i := 0; i < len(name); i++ {
				c := name[i]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				b = append(b, c)
			}
			name = b2s(b) // copied by field at once, never kept
		}
		if httpfield.ConnectionSpecific(name) || name == "content-length" || name == "date" {
			continue
		}
		if status == 0 && httpfield.ForbiddenTrailer(name) {
			continue
		}
		e.field(name, f.Value)
	}
	if date {
		e.field("date", b2s(httpmsg.Date()))
	}
	if contentLength >= 0 {
		var nb [20]byte
		e.field("content-length", b2s(strconv.AppendInt(nb[:0], contentLength, 10)))
	}
	dst = appendFrameHeader(dst, frameHeaders, uint64(len(e.buf)))
	return append(dst, e.buf...)
}

func isLower(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return false
		}
	}
	return true
}
