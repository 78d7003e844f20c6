package h1

import (
	"bytes"
	"encoding/binary"
	"math/bits"

	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/bytesconv"
)

// skipEmptyLines skips the empty lines RFC 9112 §2.2 allows before a request line.
func skipEmptyLines(b []byte) (int, error) {
	i := 0
	for lines := 0; i < len(b); lines++ {
		var next int
		switch {
		case b[i] == '\n':
			next = i + 1
		case b[i] != '\r':
			return i, nil
		case i+1 >= len(b):
			return 0, ErrNeedMore
		case b[i+1] != '\n':
			return 0, errBareCR
		default:
			next = i + 2
		}
		if lines == maxEmptyLines {
			return 0, errEmptyLines
		}
		i = next
	}
	return 0, ErrNeedMore
}

// requestLine parses "method SP request-target SP HTTP-version CRLF" (RFC 9112 §3).
func (p *parser) requestLine(b []byte, i int) (int, error) {
	r := p.r
	j := i + 3 // fast path for "GET "
	if len(b)-i < 4 || binary.LittleEndian.Uint32(b[i:]) != get4 {
		j = i
		// RFC 9112 §3: "A server that receives a method longer than any that it
		// implements SHOULD respond with a 501 (Not Implemented) status code." The
		// scan stops past MaxMethodLength so that an endless method is refused at
		// once (never a 431 after buffering a whole header section's worth of it).
		mend := min(len(b), i+MaxMethodLength+1)
		for j < mend && charClass[b[j]]&cTchar != 0 {
			j++
		}
		if j == mend {
			if j-i > MaxMethodLength {
				return 0, errMethodTooLong
			}
			return 0, ErrNeedMore
		}
		if j == i || b[j] != ' ' {
			// RFC 9110 §9.1: method = token; RFC 9112 §3: exactly one SP follows.
			return 0, errMethod
		}
	}
	r.Method = b[i:j]
	i = j + 1

	// RFC 9112 §3.2: request-target. Stop scanning once it is longer than the limit
	// so that an endless target is refused without waiting for its end (414, RFC
	// 9112 §3: "A server that receives a request-target longer than any URI it
	// wishes to parse MUST respond with a 414").
	end := len(b)
	if end-i > p.maxURI {
		end = i + p.maxURI + 1
	}
	j = scanTarget(b[:end], i)
	if j == end {
		if j-i > p.maxURI {
			return 0, errURITooLong
		}
		return 0, ErrNeedMore
	}
	if j == i || b[j] != ' ' {
		// Empty target, a second SP, a CTL, a bare CR/LF (no version: HTTP/0.9),
		// DEL or a non-ASCII byte.
		if b[j] == '\r' || b[j] == '\n' {
			return 0, errRequestLine
		}
		return 0, errTarget
	}
	r.URI = b[i:j]
	if err := p.target(); err != nil {
		return 0, err
	}
	return p.version(b, j+1)
}

// target classifies the request-target into its four forms (RFC 9112 §3.2).
func (p *parser) target() error {
	r := p.r
	t := r.URI
	switch {
	case t[0] == '/':
		// RFC 9112 §3.2.1 origin-form = absolute-path [ "?" query ]
		if bytesconv.B2S(r.Method) == "CONNECT" {
			return errTarget
		}
		r.Path, r.Query = splitQuery(t)
		return nil
	case bytesconv.B2S(r.Method) == "CONNECT":
		// RFC 9112 §3.2.3: authority-form = uri-host ":" port, for CONNECT only.
		return p.authorityForm(t)
	case len(t) == 1 && t[0] == '*':
		// RFC 9112 §3.2.4: asterisk-form, for a server-wide OPTIONS only.
		if bytesconv.B2S(r.Method) != "OPTIONS" {
			return errTarget
		}
		r.Path = t
		return nil
	}
	return p.absoluteForm(t)
}

func splitQuery(t []byte) (path, query []byte) {
	if q := bytes.IndexByte(t, '?'); q >= 0 {
		return t[:q], t[q+1:]
	}
	return t, nil
}

// absoluteForm parses "http://authority/path?query" (RFC 9112 §3.2.2). The path is
// "/" when empty: r.Path then views the last '/' of "://" so that it too aliases buf.
func (p *parser) absoluteForm(t []byte) error {
	r := p.r
	var k int
	switch {
	case len(t) >= 7 && equalLower(t[:7], "http://"):
		k = 7
	case len(t) >= 8 && equalLower(t[:8], "https://"):
		k = 8
	default:
		return errTarget
	}
	a := k
	for a < len(t) && t[a] != '/' && t[a] != '?' {
		a++
	}
	auth := t[k:a]
	// RFC 9110 §4.2.1: an empty host identifier MUST be rejected; §4.2.4: userinfo
	// SHOULD be treated as an error (it is how phishing hides a host). RFC 3986
	// §3.2.3: the port is digits only.
	if !httpfield.ValidAuthority(auth) {
		return errTarget
	}
	p.absolute = true
	r.Host = auth
	rest := t[a:]
	if len(rest) == 0 || rest[0] == '?' {
		r.Path = t[k-1 : k]
		if len(rest) > 0 {
			r.Query = rest[1:]
		}
		return nil
	}
	r.Path, r.Query = splitQuery(rest)
	return nil
}

// authorityForm checks "host:port" of a CONNECT request (RFC 9112 §3.2.3:
// authority-form = uri-host ":" port; the port is required and numeric).
func (p *parser) authorityForm(t []byte) error {
	c := bytes.LastIndexByte(t, ':')
	if c <= 0 || c == len(t)-1 || !httpfield.ValidAuthority(t) {
		return errTarget
	}
	if _, ok := bytesconv.ParseUint(t[c+1:], 65535); !ok {
		return errTarget
	}
	return nil
}

// allOfClass reports whether every byte of s has class c. It is branch-free: the
// classes of all bytes are ANDed, four at a time.
func allOfClass(s []byte, c uint8) bool {
	acc := c
	for len(s) >= 4 {
		acc &= charClass[s[0]] & charClass[s[1]] & charClass[s[2]] & charClass[s[3]]
		s = s[4:]
	}
	for _, b := range s {
		acc &= charClass[b]
	}
	return acc&c != 0
}

var get4 = binary.LittleEndian.Uint32([]byte("GET "))

var http11 = binary.LittleEndian.Uint64([]byte("HTTP/1.1"))

// version parses "HTTP/1.1" or "HTTP/1.0" and the line end (RFC 9112 §2.3).
// Bytes are checked as they arrive, so that garbage is refused early.
func (p *parser) version(b []byte, i int) (int, error) {
	const pattern = "HTTP/d.d"
	v := b[i:]
	// Fast path: "HTTP/1.1\r\n" in one comparison.
	if len(v) >= 10 && binary.LittleEndian.Uint64(v) == http11 && v[8] == '\r' && v[9] == '\n' {
		p.r.Major, p.r.Minor = 1, 1
		return i + 10, nil
	}
	for k := 0; k < len(pattern) && k < len(v); k++ {
		c := v[k]
		if pattern[k] == 'd' {
			if c < '0' || c > '9' {
				return 0, errVersion
			}
		} else if c != pattern[k] {
			return 0, errVersion // RFC 9112 §2.3: "HTTP" is case-sensitive
		}
	}
	if len(v) <= len(pattern) {
		return 0, ErrNeedMore
	}
	k := len(pattern)
	switch v[k] {
	case '\r':
		if len(v) == k+1 {
			return 0, ErrNeedMore
		}
		if v[k+1] != '\n' {
			return 0, errBareCR
		}
		k += 2
	case '\n':
		k++
	default:
		return 0, errVersion
	}
	major, minor := v[5], v[7]
	if major != '1' || (minor != '0' && minor != '1') {
		// RFC 9110 §15.6.6: 505 for a major version we do not support; for 1.x
		// with x > 1, RFC 9112 §2.3 would allow answering as 1.1, but no such
		// version exists and we refuse it likewise.
		return 0, errVersionSupported
	}
	p.r.Major, p.r.Minor = 1, minor-'0'
	return i + k, nil
}

// scanTarget returns the index of the first byte at or after j that is not a
// request-target byte (visible ASCII but '#'), or len(b). Eight bytes at a time:
// in the word that holds the end, the lowest flagged byte is the first one that
// is not a target byte (the SWAR tests can flag bytes above a true one, never
// below it), so the end is found without a loop over the word's bytes.
func scanTarget(b []byte, j int) int {
	for j+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[j:])
		if m := hasLess(x, 0x21) | hasMore(x, 0x7e) | hasZero(x^'#'*lsb); m != 0 {
			return j + bits.TrailingZeros64(m)/8
		}
		j += 8
	}
	for j < len(b) && charClass[b[j]]&cTarget != 0 {
		j++
	}
	return j
}
