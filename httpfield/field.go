// Package httpfield holds HTTP's rules for header and trailer fields, written
// once for every protocol Celeris speaks: what a field name and value may hold
// (RFC 9110 §5.1, §5.5), which fields are connection-specific (RFC 9113 §8.2.2,
// RFC 9114 §4.2), which may not be trailers (RFC 9110 §6.5.1), the request
// pseudo-header fields of HTTP/2 and HTTP/3 (RFC 9113 §8.3.1, RFC 9114 §4.3.1,
// RFC 8441, RFC 9220), and the authority of Host and :authority (RFC 3986 §3.2).
//
// The HTTP/1.1, HTTP/2 and HTTP/3 writers, the net/http adapter and Hijack's
// 101 head drop a response field that ValidResponseField refuses (response
// splitting, CWE-113), and the HTTP/2 and HTTP/3 readers treat a request field
// that CheckRequestField refuses as malformed. It imports the standard library
// only, so modules outside the core (http3) use the same rules.
//
// Policy on the bytes of a value. A value sent holds what the grammar allows
// (RFC 9110 §5.5: field-vchar = VCHAR / obs-text, SP and HTAB between; §2.2: "A
// sender MUST NOT generate protocol elements that do not match the grammar"):
// obs-text (0x80-0xFF) is sent, every control character but HTAB is not, DEL
// included (ValidValue; golang.org/x/net/http2's server drops the same values,
// and Go's HTTP/2 client refuses a response that has one). A value received
// must be free of CR, LF and NUL only (SafeValue: RFC 9110 §5.5 "invalid and
// dangerous", RFC 9113 §8.2.1, RFC 9114 §4.2); the other control characters
// are kept, as §5.5 allows "for the sake of robustness".
package httpfield

// tchar classes: token characters (RFC 9110 §5.6.2) and their lower-case subset.
const (
	cTchar      = 1 << iota // tchar
	cLowerTchar             // tchar other than 'A'-'Z'
)

var class = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = cTchar | cLowerTchar
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = cTchar | cLowerTchar
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = cTchar
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = cTchar | cLowerTchar
	}
	return t
}()

// IsTchar reports whether b is a tchar (RFC 9110 §5.6.2).
func IsTchar(b byte) bool { return class[b]&cTchar != 0 }

// ValidName reports whether name is a field name: a token (RFC 9110 §5.1,
// "field-name = token"), in any case.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	acc := uint8(cTchar)
	i := 0
	for ; i+4 <= len(name); i += 4 {
		acc &= class[name[i]] & class[name[i+1]] & class[name[i+2]] & class[name[i+3]]
	}
	for ; i < len(name); i++ {
		acc &= class[name[i]]
	}
	return acc&cTchar != 0
}

// ValidValue reports whether value may be sent: it holds no control character
// but HTAB (RFC 9110 §5.5; see the package doc).
func ValidValue(value string) bool { return scanValue(value, true) }

// SafeValue reports whether a value received may be kept: it holds no CR, LF
// or NUL (RFC 9110 §5.5, RFC 9113 §8.2.1, RFC 9114 §4.2; see the package doc).
func SafeValue(value string) bool { return scanValue(value, false) }

// scanValue is ValidValue (strict) or SafeValue. It reads eight bytes at a
// time, the last word overlapping the one before it: a word without a byte
// below 0x20 (or, strict, a DEL) passes with one test, and only a word that has
// one (an HTAB, say) is looked at byte by byte.
func scanValue(s string, strict bool) bool {
	if len(s) < 8 {
		return scanBytes(s, strict)
	}
	for i := 0; ; i += 8 {
		if i > len(s)-8 {
			i = len(s) - 8
		}
		x := word(s, i)
		m := hasLess(x, 0x20)
		if strict {
			m |= hasZero(x ^ 0x7f*lsb)
		}
		if m != 0 && !scanBytes(s[i:i+8], strict) {
			return false
		}
		if i == len(s)-8 {
			return true
		}
	}
}

// scanBytes is scanValue byte by byte.
func scanBytes(s string, strict bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\r' || c == '\n' || c == 0 || strict && (c < 0x20 && c != '\t' || c == 0x7f) {
			return false
		}
	}
	return true
}

// word loads value[i:i+8] little-endian (the compiler merges the loads).
func word(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasLess is non-zero when a byte of x is below n (n <= 128): the classic
// "determine if a word has a byte less than n" test.
func hasLess(x, n uint64) uint64 { return (x - lsb*n) & ^x & msb }

// hasZero is non-zero when a byte of x is zero.
func hasZero(x uint64) uint64 { return (x - lsb) & ^x & msb }

// ValidResponseField reports whether a response field (header or trailer) may
// be sent: its name is a token and its value holds no control character but
// HTAB (ValidValue). Every writer drops any other field.
func ValidResponseField(name, value string) bool {
	return ValidName(name) && ValidValue(value)
}

// ConnectionSpecific reports whether name (any case) is a connection-specific
// field, which HTTP/2 and HTTP/3 messages may not carry (RFC 9113 §8.2.2, RFC
// 9114 §4.2): Connection, Keep-Alive, Proxy-Connection, Transfer-Encoding,
// Upgrade. TE is the one exception, allowed with the value "trailers" only
// (ValidTE).
func ConnectionSpecific(name string) bool {
	switch len(name) {
	case 7:
		return EqualFold(name, "upgrade")
	case 10:
		return EqualFold(name, "connection") || EqualFold(name, "keep-alive")
	case 16:
		return EqualFold(name, "proxy-connection")
	case 17:
		return EqualFold(name, "transfer-encoding")
	}
	return false
}

// ValidTE reports whether value is the only TE an HTTP/2 or HTTP/3 request may
// carry: "trailers" (RFC 9113 §8.2.2, RFC 9114 §4.2).
func ValidTE(value string) bool { return value == "trailers" }

// ForbiddenTrailer reports whether a field named name (any case) must not be
// sent as a trailer, and is dropped by the writers: RFC 9110 §6.5.1 keeps out of
// the trailer section the fields needed before the content is processed:
// message framing (Content-Length, Transfer-Encoding, Trailer, TE), routing
// (Host), request modifiers (controls and conditionals: Cache-Control, Expect,
// Max-Forwards, Pragma, Range, If-*), authentication (Authorization, Proxy-*,
// WWW-Authenticate, Set-Cookie), response control data (Age, Date, Expires,
// Location, Retry-After, Vary) and content format (Content-Type,
// Content-Encoding, Content-Range), plus the connection-specific fields and
// pseudo-header fields (RFC 9113 §8.1, RFC 9114 §4.3). It covers net/http's
// badTrailer list.
func ForbiddenTrailer(name string) bool {
	if name == "" || name[0] == ':' {
		return true
	}
	if len(name) > 3 && EqualFold(name[:3], "if-") {
		return true
	}
	for _, f := range forbiddenTrailers {
		if EqualFold(name, f) {
			return true
		}
	}
	return false
}

var forbiddenTrailers = [...]string{
	"Age", "Authorization", "Cache-Control", "Connection", "Content-Encoding",
	"Content-Length", "Content-Range", "Content-Type", "Date", "Expect", "Expires",
	"Host", "Keep-Alive", "Location", "Max-Forwards", "Pragma", "Proxy-Authenticate",
	"Proxy-Authorization", "Proxy-Connection", "Range", "Realm", "Retry-After",
	"Set-Cookie", "TE", "Trailer", "Transfer-Encoding", "Upgrade", "Vary",
	"WWW-Authenticate",
}

// EqualFold reports whether ASCII strings a and b are equal ignoring case, as
// field names compare (RFC 9110 §5.1: "Field names are case-insensitive").
func EqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if 'A' <= ca && ca <= 'Z' {
			ca += 'a' - 'A'
		}
		if 'A' <= cb && cb <= 'Z' {
			cb += 'a' - 'A'
		}
		if ca != cb {
			return false
		}
	}
	return true
}
