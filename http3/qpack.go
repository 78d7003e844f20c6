package celerish3

import (
	"strconv"
	"strings"

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

// Pseudo-header fields seen, as bits.
const (
	seenMethod = 1 << iota
	seenScheme
	seenPath
	seenAuthority
	seenProtocol
)

// requestHead is what decodeRequestHead collects besides the fields it stores
// in the request.
type requestHead struct {
	pseudo                                    uint8
	method, scheme, path, authority, protocol string
	host                                      string
	contentLength                             int64 // -1: none
}

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
	h := requestHead{contentLength: -1}
	regular := false
	err := decodeFields(block, maxSize, arena, func(name, value string) error {
		if msg := httpmsg.CheckField(name, value); msg != "" {
			return malformed(msg)
		}
		if name[0] == ':' {
			if regular {
				// §4.3: "All pseudo-header fields MUST appear in the header
				// section before regular header fields."
				return malformed("pseudo-header field after a regular field")
			}
			return h.pseudoField(name, value)
		}
		regular = true
		if connectionSpecific(name) {
			// §4.2: "An endpoint MUST NOT generate an HTTP/3 field section
			// containing connection-specific fields; any message containing
			// connection-specific fields MUST be treated as malformed."
			return malformed("connection-specific header field")
		}
		switch name {
		case "te":
			// §4.2: "The only exception to this is the TE header field, which
			// MAY be present in an HTTP/3 request header; when it is, it MUST
			// NOT contain any value other than "trailers"."
			if value != "trailers" {
				return malformed("TE other than trailers")
			}
		case "content-length":
			// Digits only (no sign, no underscore: base 10), at most 2^62.
			n, err := strconv.ParseUint(value, 10, 63)
			if err != nil || n > 1<<62 || (h.contentLength >= 0 && h.contentLength != int64(n)) {
				return malformed("bad content-length")
			}
			h.contentLength = int64(n)
		case "host":
			if h.host == "" {
				h.host = value
			}
		}
		req.Header = append(req.Header, httpmsg.Field{Name: name, Value: value})
		return nil
	})
	if err != nil {
		return err
	}
	if msg := h.check(); msg != "" {
		return malformed(msg)
	}
	req.Method = h.method
	req.Scheme = h.scheme
	req.RequestURI = h.path
	req.Path, req.RawQuery = h.path, ""
	if i := strings.IndexByte(h.path, '?'); i >= 0 {
		req.Path, req.RawQuery = h.path[:i], h.path[i+1:]
	}
	req.Host = h.authority
	if req.Host == "" {
		req.Host = h.host
	}
	req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/3.0", 3, 0
	req.ContentLength = h.contentLength
	if h.protocol != "" {
		// As on HTTP/2: the protocol reaches the handler as a field (net/http's
		// r.Header[":protocol"]), and the stream is a tunnel.
		req.Header = append(req.Header, httpmsg.Field{Name: ":protocol", Value: h.protocol})
	}
	return nil
}

// pseudoField records a request pseudo-header field (RFC 9114 §4.3.1).
func (h *requestHead) pseudoField(name, value string) error {
	var bit uint8
	switch name {
	case ":method":
		bit, h.method = seenMethod, value
	case ":scheme":
		bit, h.scheme = seenScheme, value
	case ":path":
		bit, h.path = seenPath, value
	case ":authority":
		bit, h.authority = seenAuthority, value
	case ":protocol":
		// RFC 9220 §3: defined once the server sent
		// SETTINGS_ENABLE_CONNECT_PROTOCOL, which it does.
		bit, h.protocol = seenProtocol, value
	default:
		// §4.3: "Endpoints MUST treat a request or response that contains
		// undefined or invalid pseudo-header fields as malformed"; a response
		// pseudo-header field (:status) in a request is one.
		return malformed("unknown or response pseudo-header field")
	}
	if h.pseudo&bit != 0 {
		// §4.3.1: each pseudo-header field appears at most once.
		return malformed("repeated pseudo-header field")
	}
	h.pseudo |= bit
	if value == "" {
		// §4.3.1: ":path ... MUST NOT be empty for http or https URIs";
		// :method and :scheme are tokens; an empty :authority is no authority.
		return malformed("empty pseudo-header field")
	}
	return nil
}

// check applies the rules on the pseudo-header fields as a whole (RFC 9114
// §4.3.1, §4.4).
func (h *requestHead) check() string {
	if h.pseudo&seenProtocol != 0 {
		// RFC 9220 §3 (RFC 8441 §4): an extended CONNECT carries :scheme,
		// :path and :authority with :protocol, and only CONNECT carries
		// :protocol.
		if h.method != "CONNECT" {
			return ":protocol on a method other than CONNECT"
		}
		if h.pseudo != seenMethod|seenScheme|seenPath|seenAuthority|seenProtocol || h.path[0] != '/' {
			return "bad extended CONNECT pseudo-header fields"
		}
		return ""
	}
	if h.method == "CONNECT" {
		// §4.4: ":scheme and :path pseudo-header fields are omitted"; "The
		// :authority pseudo-header field contains the host and port to
		// connect to."
		if h.pseudo != seenMethod|seenAuthority {
			return "bad CONNECT pseudo-header fields"
		}
		return ""
	}
	// §4.3.1: "All HTTP/3 requests MUST include exactly one value for the
	// :method, :scheme, and :path pseudo-header fields, unless the request is a
	// CONNECT request."
	if h.pseudo&(seenMethod|seenScheme|seenPath) != seenMethod|seenScheme|seenPath {
		return "missing pseudo-header field"
	}
	for i := 0; i < len(h.method); i++ {
		if !isTchar(h.method[i]) {
			return "bad :method"
		}
	}
	if h.path[0] != '/' && !(h.path == "*" && h.method == "OPTIONS") {
		return "bad :path"
	}
	if h.scheme == "http" || h.scheme == "https" {
		// §4.3.1: "If the :scheme pseudo-header field identifies a scheme that
		// has a mandatory authority component (including "http" and "https"),
		// the request MUST contain either an :authority pseudo-header field or
		// a Host header field. ... If both fields are present, they MUST
		// contain the same value."
		if h.authority == "" && h.host == "" {
			return "no :authority or Host"
		}
		if h.authority != "" && h.host != "" && h.authority != h.host {
			return ":authority and Host differ"
		}
	}
	return ""
}

// decodeTrailers decodes a trailer section into req.Trailer (RFC 9114 §4.1).
func decodeTrailers(block []byte, req *httpmsg.Request, maxSize uint64, arena *fieldArena) error {
	return decodeFields(block, maxSize, arena, func(name, value string) error {
		if msg := httpmsg.CheckField(name, value); msg != "" {
			return malformed(msg)
		}
		if name[0] == ':' {
			// §4.3: "Pseudo-header fields MUST NOT appear in trailer sections."
			return malformed("pseudo-header field in trailers")
		}
		if connectionSpecific(name) {
			return malformed("connection-specific trailer field")
		}
		req.Trailer = append(req.Trailer, httpmsg.Field{Name: name, Value: value})
		return nil
	})
}

func isTchar(b byte) bool { return httpmsg.LowerTchar(b) || ('A' <= b && b <= 'Z') }

// connectionSpecific reports the fields RFC 9114 §4.2 forbids, for a name
// in lower case.
func connectionSpecific(name string) bool {
	switch name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return true
	}
	return false
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
		if !httpmsg.ValidResponseField(f.Name, f.Value) {
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
		if connectionSpecific(name) || name == "content-length" || name == "date" {
			continue
		}
		if status == 0 && httpmsg.ForbiddenTrailer(name) {
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
