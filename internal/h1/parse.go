package h1

import (
	"bytes"
	"encoding/binary"
	"errors"

	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// ErrNeedMore reports that buf does not yet hold a complete request head. Call
// ParseHead again with the same bytes followed by more. It is not an *Error.
var ErrNeedMore = errors.New("h1: need more data")

// Refusals returned by ParseHead (and the chunked decoder). They are shared values:
// callers compare Status and must not modify them. Reasons never echo input.
var (
	errEmptyLines       = &Error{Status: 400, Reason: "too many empty lines before the request line"}
	errBareCR           = &Error{Status: 400, Reason: "bare CR"}
	errMethod           = &Error{Status: 400, Reason: "invalid method"}
	errRequestLine      = &Error{Status: 400, Reason: "malformed request line"}
	errTarget           = &Error{Status: 400, Reason: "invalid request target"}
	errVersion          = &Error{Status: 400, Reason: "malformed HTTP version"}
	errFieldName        = &Error{Status: 400, Reason: "invalid header field name"}
	errFieldValue       = &Error{Status: 400, Reason: "invalid header field value"}
	errObsFold          = &Error{Status: 400, Reason: "obsolete line folding"}
	errNoHost           = &Error{Status: 400, Reason: "missing Host header"}
	errManyHosts        = &Error{Status: 400, Reason: "repeated Host header"}
	errBadHost          = &Error{Status: 400, Reason: "invalid Host header"}
	errContentLength    = &Error{Status: 400, Reason: "invalid Content-Length"}
	errCLConflict       = &Error{Status: 400, Reason: "conflicting Content-Length"}
	errTEWithCL         = &Error{Status: 400, Reason: "Transfer-Encoding with Content-Length"}
	errTE10             = &Error{Status: 400, Reason: "Transfer-Encoding in HTTP/1.0"}
	errTEChunkedTwice   = &Error{Status: 400, Reason: "chunked applied twice"}
	errTEEmpty          = &Error{Status: 400, Reason: "empty Transfer-Encoding"}
	errTEChunkedNotLast = &Error{Status: 400, Reason: "chunked is not the final transfer coding"}
	errBodyTooLarge     = &Error{Status: 413, Reason: "request body too large"}
	errURITooLong       = &Error{Status: 414, Reason: "request target too long"}
	errExpectation      = &Error{Status: 417, Reason: "unsupported expectation"}
	errHeaderTooLarge   = &Error{Status: 431, Reason: "request header section too large"}
	errTooManyFields    = &Error{Status: 431, Reason: "too many header fields"}
	errTransferCoding   = &Error{Status: 501, Reason: "unsupported transfer coding"}
	errMethodTooLong    = &Error{Status: 501, Reason: "method not implemented"}
	errVersionSupported = &Error{Status: 505, Reason: "HTTP version not supported"}
)

// maxEmptyLines bounds the empty lines skipped before a request line.
const maxEmptyLines = 4

// MaxMethodLength bounds the method token. No method in IANA's registry is longer
// than 17 bytes (UPDATEREDIRECTREF); a longer one is refused with 501 as soon as
// it is seen, without waiting for the rest of the request line. The framework
// refuses to register a route whose method is longer.
const MaxMethodLength = 32

// Byte classes, one table so that a scan touches one cache line per byte value.
const (
	cTchar  = 1 << iota // token character, RFC 9110 §5.6.2
	cValue              // field-value byte: VCHAR, obs-text, SP, HTAB (RFC 9110 §5.5)
	cTarget             // request-target byte we accept (visible ASCII but '#')
)

var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c == '\t' || c == ' ' || c >= 0x80:
			t[c] |= cValue
		case c > 0x20 && c < 0x7f:
			t[c] |= cValue | cTarget
		}
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			t[c] |= cTchar
		}
	}
	for _, c := range []byte("!#$%&'*+-.^_`|~") {
		t[c] |= cTchar
	}
	// RFC 9112 §3.2: a request-target never carries a fragment.
	t['#'] &^= cTarget
	return t
}()

// lower maps ASCII upper-case letters to lower case and every other byte to itself.
var lower = func() (t [256]byte) {
	for c := range t {
		t[c] = byte(c)
		if c >= 'A' && c <= 'Z' {
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	return t
}()

// equalLower reports whether b equals s ignoring ASCII case; s must be lower case.
func equalLower(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower[b[i]] != s[i] {
			return false
		}
	}
	return true
}

// Reset clears r for reuse. Headers is left empty and backed by r's inline array.
func (r *Request) Reset() {
	n := len(r.Headers)
	if n > inlineFields || cap(r.Headers) != inlineFields {
		n = inlineFields
	}
	clear(r.inline[:n]) // drop references to the old buffer
	r.clear(r.inline[:0])
}

// clear zeroes every field but the inline array (assigning a composite literal
// would copy the array twice) and sets Headers to h.
func (r *Request) clear(h []Field) {
	r.Method, r.URI, r.Path, r.Query = nil, nil, nil, nil
	r.Major, r.Minor = 0, 0
	r.Host, r.Headers = nil, h
	r.ContentLength = -1
	r.Chunked, r.KeepAlive, r.Expect100, r.UpgradeH2C, r.Upgrade = false, false, false, false, false
	r.HTTP2Settings = nil
	r.HeadLen = 0
}

// Rebase re-points every slice of r from old, the buffer r was parsed from, onto new,
// a copy of old's first len(new) bytes (len(new) >= r.HeadLen). The slices of r must
// have been cut from old with two-index slice expressions, as ParseHead does, so
// that each one's offset in old is cap(old)-cap(s). Headers ends up backed by r's
// inline array when it holds no more than its 32 fields.
func (r *Request) Rebase(old, new []byte) {
	r.Method = rebase(r.Method, old, new)
	r.URI = rebase(r.URI, old, new)
	r.Path = rebase(r.Path, old, new)
	r.Query = rebase(r.Query, old, new)
	r.Host = rebase(r.Host, old, new)
	r.HTTP2Settings = rebase(r.HTTP2Settings, old, new)
	h := r.Headers
	if len(h) <= inlineFields {
		// Also covers a Request copied by value, whose Headers still points at the
		// original's inline array.
		h = r.inline[:copy(r.inline[:], h)]
	}
	for i := range h {
		h[i].Name = rebase(h[i].Name, old, new)
		h[i].Value = rebase(h[i].Value, old, new)
	}
	r.Headers = h
}

func rebase(s, old, new []byte) []byte {
	if s == nil {
		return nil
	}
	off := cap(old) - cap(s)
	return new[off : off+len(s)]
}

// ParseHead parses the request line and header section at the start of buf into r
// (RFC 9112 §2-§6). It returns the length of the head, including the empty line
// that ends it, which is also r.HeadLen; bytes after it (a body, or pipelined
// requests) are not looked at.
//
// When buf holds a prefix of a valid head it returns ErrNeedMore: call again with the
// same bytes followed by more. Errors are returned as soon as they are certain, even
// on an incomplete head: a syntax error at the bytes seen so far, a request-target
// longer than MaxURILength (414), more than MaxHeaderBytes without the end of the
// head (431; the count runs from buf[0], leading empty lines included, to the end of
// the empty line). A request to refuse yields an *Error carrying the status to
// answer. Incomplete heads longer than 4 KiB are checked less eagerly; see
// fullParseLimit.
//
// ParseHead is pure: r is overwritten on every call, and its fields are meaningful
// only after a nil error. Every slice in r aliases buf (see Request). It allocates
// nothing unless the request has more than 32 header fields.
//
// The leniencies, all allowed by RFC 9112: up to 4 empty lines before the request
// line are skipped (§2.2), and a bare LF ends a line as CRLF does (§2.2). A bare CR
// anywhere is refused.
func ParseHead(buf []byte, r *Request, lim *Limits) (n int, err error) {
	maxHeader := DefaultMaxHeaderBytes
	if lim != nil && lim.MaxHeaderBytes > 0 {
		maxHeader = lim.MaxHeaderBytes
	}
	b := buf
	if len(b) > maxHeader {
		b = b[:maxHeader] // two-index slice: cap(b) == cap(buf) keeps Rebase working
	}
	// Start from a cleared Request; a Headers slice that grew beyond the inline
	// array is reused.
	h := r.Headers[:0]
	if cap(h) <= inlineFields {
		h = r.inline[:0]
	}
	r.clear(nil)
	p := parser{r: r, headers: h}
	p.limits(lim)
	if len(b) > fullParseLimit && !hasBlankLine(b) {
		n, err = p.parseLong(b)
	} else {
		n, err = p.parse(b)
	}
	r.Headers = p.headers // also on error: a grown slice is kept for the next call
	if err == ErrNeedMore && len(buf) > maxHeader {
		// RFC 6585 §5: 431 when the header section is larger than we accept.
		return 0, errHeaderTooLarge
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// fullParseLimit: an incomplete head longer than this is not re-validated on every
// call. Re-parsing from the start is what keeps ParseHead pure, but it makes a client
// that sends a 64 KiB head one byte per read cost quadratic time: 3 s of CPU for one
// connection when every call re-parses, 0.6 s with this limit, where such a head
// gets only its request line (414, syntax) and its size (431) checked until an
// empty line shows up; errors in its fields are then found once it is complete.
// Below the limit every error is reported as early as it can be. (Callers that
// re-parse only when the buffer has grown by half since the last ErrNeedMore make
// the total linear.)
const fullParseLimit = 4 << 10

// hasBlankLine reports whether b holds an empty line, which every complete head ends
// with: a LF followed by LF or CRLF. One IndexByte per line.
func hasBlankLine(b []byte) bool {
	for i := 0; ; {
		k := bytes.IndexByte(b[i:], '\n')
		if k < 0 {
			return false
		}
		i += k + 1
		if i < len(b) && (b[i] == '\n' || b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n') {
			return true
		}
	}
}

// parseLong handles a head known to be incomplete and longer than fullParseLimit.
func (p *parser) parseLong(b []byte) (int, error) {
	i, err := skipEmptyLines(b)
	if err == nil {
		_, err = p.requestLine(b, i)
	}
	if err == nil {
		err = ErrNeedMore
	}
	return 0, err
}

// parser holds the state of one ParseHead call.
type parser struct {
	r        *Request
	headers  []Field // becomes r.Headers
	maxURI   int
	maxCount int
	maxBody  int64

	absolute   bool // the target is in absolute-form; r.Host is its authority
	hosts      int
	h2s        int  // HTTP2-Settings fields
	te         bool // a Transfer-Encoding field was seen
	teChunked  bool // chunked was seen in Transfer-Encoding
	teTwice    bool // chunked was seen twice (the fields form one list)
	teNotLast  bool // a coding follows chunked
	teUnknown  bool // a coding other than chunked was seen
	connClose  bool
	connKeep   bool
	connUpg    bool // Connection lists "upgrade"
	connH2S    bool // Connection lists "http2-settings"
	upgradeH2C bool // Upgrade lists "h2c"
	upgradeAny bool // an Upgrade field is present
	expect     bool // Expect: 100-continue
}

func (p *parser) limits(lim *Limits) {
	p.maxURI, p.maxCount, p.maxBody = DefaultMaxURILength, DefaultMaxHeaderCount, DefaultMaxBodySize
	if lim == nil {
		return
	}
	if lim.MaxURILength > 0 {
		p.maxURI = lim.MaxURILength
	}
	if lim.MaxHeaderCount > 0 {
		p.maxCount = lim.MaxHeaderCount
	}
	if lim.MaxBodySize > 0 {
		p.maxBody = lim.MaxBodySize
	}
}

func (p *parser) parse(b []byte) (int, error) {
	i, err := skipEmptyLines(b)
	if err != nil {
		return 0, err
	}
	i, err = p.requestLine(b, i)
	if err != nil {
		return 0, err
	}
	for {
		if i >= len(b) {
			return 0, ErrNeedMore
		}
		switch b[i] {
		case '\r':
			if i+1 >= len(b) {
				return 0, ErrNeedMore
			}
			if b[i+1] != '\n' {
				return 0, errBareCR
			}
			i += 2
			return i, p.finish(i)
		case '\n':
			i++
			return i, p.finish(i)
		case ' ', '\t':
			// RFC 9112 §5.2: a server MUST reject obs-fold with 400 (or unfold it);
			// §2.2: whitespace before the first field likewise. Folding is how a
			// field hides from one parser and not another.
			return 0, errObsFold
		}
		i, err = p.field(b, i)
		if err != nil {
			return 0, err
		}
	}
}

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
	if !httpmsg.ValidAuthority(auth) {
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
	if c <= 0 || c == len(t)-1 || !httpmsg.ValidAuthority(t) {
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

// field parses one "field-name: OWS field-value OWS CRLF" line (RFC 9112 §5).
func (p *parser) field(b []byte, i int) (int, error) {
	colon, vs, ve, next, ok := fieldFast(b, i)
	if !ok {
		var err error
		if colon, vs, ve, next, err = fieldSlow(b, i); err != nil {
			return 0, err
		}
	}
	name := b[i:colon]
	for ve > vs && (b[ve-1] == ' ' || b[ve-1] == '\t') {
		ve--
	}
	value := b[vs:ve]
	if len(p.headers) >= p.maxCount {
		return 0, errTooManyFields
	}
	p.headers = append(p.headers, Field{Name: name, Value: value})
	return next, p.special(name, value)
}

// fieldFast handles the common case of a complete, valid field line: it finds the
// line end with bytes.IndexByte and checks the value a word at a time. When it
// reports !ok, fieldSlow decides (incomplete line, invalid byte, HTAB in the value).
// colon is the index of ':', [vs, ve) the value with leading OWS skipped, next the
// index after the line end.
func fieldFast(b []byte, i int) (colon, vs, ve, next int, ok bool) {
	lf := bytes.IndexByte(b[i:], '\n')
	if lf < 0 {
		return
	}
	lf += i
	c := bytes.IndexByte(b[i:lf], ':')
	if c <= 0 || !allOfClass(b[i:i+c], cTchar) {
		return
	}
	colon = i + c
	j := colon + 1
	for j < lf && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	vs, ve = j, lf
	if b[lf-1] == '\r' {
		ve = lf - 1 // lf-1 >= colon; b[colon] is ':', so ve >= vs
	}
	// Check [vs, ve) eight bytes at a time; the last partial word is read with
	// the bytes after it replaced by 'a', or byte by byte at the end of b.
	for ; j+8 <= ve; j += 8 {
		if badValueWord(binary.LittleEndian.Uint64(b[j:])) {
			return
		}
	}
	if k := ve - j; k > 0 {
		if len(b)-j >= 8 {
			mask := uint64(1)<<(8*k) - 1
			if badValueWord(binary.LittleEndian.Uint64(b[j:])&mask | 0x6161616161616161&^mask) {
				return
			}
		} else if !allOfClass(b[j:ve], cValue) {
			return
		}
	}
	return colon, vs, ve, lf + 1, true
}

// badValueWord reports whether x may hold a byte other than VCHAR, obs-text or SP
// (HTAB counts as bad here: fieldSlow accepts it).
func badValueWord(x uint64) bool {
	return hasLess(x, 0x20)|hasZero(x^0x7f*lsb) != 0
}

// fieldSlow parses a field line byte by byte, refusing invalid bytes as soon as it
// sees them, even on an incomplete line.
func fieldSlow(b []byte, i int) (colon, vs, ve, next int, err error) {
	j := i
	for j < len(b) && charClass[b[j]]&cTchar != 0 {
		j++
	}
	if j == len(b) {
		return 0, 0, 0, 0, ErrNeedMore
	}
	if b[j] != ':' || j == i {
		// RFC 9112 §5.1: "No whitespace is allowed between the field name and
		// colon ... A server MUST reject, with a response status code of 400 (Bad
		// Request), any received request message that contains whitespace between
		// a header field name and colon." (request smuggling).
		return 0, 0, 0, 0, errFieldName
	}
	colon = j
	j++
	for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	vs = j
	j = scanValue(b, j)
	if j == len(b) {
		return 0, 0, 0, 0, ErrNeedMore
	}
	switch b[j] {
	case '\r':
		if j+1 == len(b) {
			return 0, 0, 0, 0, ErrNeedMore
		}
		if b[j+1] != '\n' {
			// RFC 9112 §2.2: a bare CR MUST be rejected or replaced by SP.
			return 0, 0, 0, 0, errBareCR
		}
		next = j + 2
	case '\n':
		next = j + 1
	default:
		// RFC 9110 §5.5: NUL and other CTLs are invalid in a field value and a
		// recipient MUST reject the message or replace them.
		return 0, 0, 0, 0, errFieldValue
	}
	return colon, vs, j, next, nil
}

// Word-at-a-time scanning (SWAR, "Bit Twiddling Hacks"): eight bytes are checked
// with a few integer operations, and a word holding any byte that might stop the scan
// is re-checked byte by byte. The tests are exact for "some byte in the word":
//
//	hasLess(x, n): some byte < n (n <= 128)
//	hasMore(x, n): some byte > n (n <= 127)
//	hasZero(x):    some byte == 0
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

func hasLess(x, n uint64) uint64 { return (x - n*lsb) &^ x & msb }
func hasMore(x, n uint64) uint64 { return (x + (127-n)*lsb | x) & msb }
func hasZero(x uint64) uint64    { return (x - lsb) &^ x & msb }

// scanValue returns the index of the first byte at or after j that is not a
// field-value byte (VCHAR, obs-text, SP, HTAB), or len(b).
func scanValue(b []byte, j int) int {
	for {
		for j+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[j:])
			if hasLess(x, 0x20)|hasZero(x^0x7f*lsb) != 0 {
				break // a CTL (maybe HTAB, CR or LF) or DEL
			}
			j += 8
		}
		end := min(j+8, len(b))
		for j < end && charClass[b[j]]&cValue != 0 {
			j++
		}
		if j < end || j == len(b) {
			return j
		}
	}
}

// scanTarget returns the index of the first byte at or after j that is not a
// request-target byte (visible ASCII but '#'), or len(b).
func scanTarget(b []byte, j int) int {
	for {
		for j+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[j:])
			if hasLess(x, 0x21)|hasMore(x, 0x7e)|hasZero(x^'#'*lsb) != 0 {
				break
			}
			j += 8
		}
		end := min(j+8, len(b))
		for j < end && charClass[b[j]]&cTarget != 0 {
			j++
		}
		if j < end || j == len(b) {
			return j
		}
	}
}

// special interprets the fields that shape framing and connection handling.
func (p *parser) special(name, value []byte) error {
	r := p.r
	switch len(name) {
	case 4:
		if equalLower(name, "host") {
			// RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request)
			// status code to any HTTP/1.1 request message that lacks a Host header
			// field and to any request message that contains more than one Host
			// header field line or a Host header field with an invalid field
			// value." Valid is uri-host [ ":" port ] (RFC 3986 §3.2.2, §3.2.3: no
			// userinfo, spaces, CTLs or non-ASCII bytes; a port of digits only),
			// and not empty: an http URI's host never is (RFC 9110 §4.2.1), and an
			// empty Host is what the target of a request without authority would
			// carry, which this server does not serve. This holds for absolute-form
			// targets too, whose authority replaces the Host (§3.2.2): the rule
			// above makes no exception, and a proxy in front may route by Host (Host
			// header confusion, e.g. "Host: a.example:80x" or "Host: a@b").
			p.hosts++
			if p.hosts > 1 {
				return errManyHosts
			}
			if !httpmsg.ValidAuthority(value) {
				return errBadHost
			}
			if !p.absolute {
				r.Host = value
			}
		}
	case 6:
		if equalLower(name, "expect") {
			return p.expectation(value)
		}
	case 7:
		if equalLower(name, "upgrade") {
			p.upgradeAny = true
			forEachElement(value, func(e []byte) {
				if equalLower(e, "h2c") {
					p.upgradeH2C = true
				}
			})
		}
	case 10:
		if equalLower(name, "connection") {
			forEachElement(value, func(e []byte) {
				switch {
				case equalLower(e, "close"):
					p.connClose = true
				case equalLower(e, "keep-alive"):
					p.connKeep = true
				case equalLower(e, "upgrade"):
					p.connUpg = true
				case equalLower(e, "http2-settings"):
					p.connH2S = true
				}
			})
		}
	case 14:
		if equalLower(name, "content-length") {
			return p.contentLength(value)
		}
		if equalLower(name, "http2-settings") {
			p.h2s++
			r.HTTP2Settings = value
		}
	case 17:
		if equalLower(name, "transfer-encoding") {
			return p.transferEncoding(value)
		}
	}
	return nil
}

// contentLength parses one Content-Length field (RFC 9110 §8.6).
func (p *parser) contentLength(v []byte) error {
	r := p.r
	if cl, ok := bytesconv.ParseUint(v, 1<<63-1); ok && (r.ContentLength < 0 || r.ContentLength == int64(cl)) {
		r.ContentLength = int64(cl) // the common case: one plain number
		return nil
	}
	var err error
	n := forEachElement(v, func(e []byte) {
		cl, ok := bytesconv.ParseUint(e, 1<<63-1) // 1*DIGIT: no sign, no space
		switch {
		case err != nil:
		case !ok:
			err = errContentLength
		case r.ContentLength < 0:
			r.ContentLength = int64(cl)
		case r.ContentLength != int64(cl):
			// RFC 9112 §6.3 item 5: differing lengths are an unrecoverable error
			// (RFC 9110 §8.6 allows only a list of identical values); a proxy that
			// picks the other one is smuggled a request.
			err = errCLConflict
		}
	})
	if err == nil && n == 0 {
		err = errContentLength
	}
	return err
}

// transferEncoding parses one Transfer-Encoding field. Several fields form one list.
func (p *parser) transferEncoding(v []byte) error {
	if p.r.Minor == 0 {
		// RFC 9112 §6.1: a server MUST treat a message with Transfer-Encoding in
		// HTTP/1.0 as having faulty framing and close the connection after it.
		return errTE10
	}
	p.te = true
	// Several fields form one list (RFC 9110 §5.3). Chunked applied twice or not
	// last is a 400 whatever follows, so it is refused at once; an unknown coding
	// (501) waits for the whole header section (finish), since a later field may
	// still put a coding after chunked, which must be answered 400.
	n := forEachElement(v, func(e []byte) {
		switch {
		case equalLower(e, "chunked"):
			p.teTwice = p.teTwice || p.teChunked
			p.teChunked = true
		case p.teChunked:
			p.teNotLast = true
		default:
			p.teUnknown = true
		}
	})
	switch {
	case p.teTwice:
		// RFC 9112 §6.1: "A sender MUST NOT apply the chunked transfer coding
		// more than once to a message body."
		return errTEChunkedTwice
	case p.teNotLast:
		// RFC 9112 §6.3 item 4: chunked is not the final coding, so "the server
		// MUST respond with the 400 (Bad Request) status code and then close the
		// connection", whatever the other codings are.
		return errTEChunkedNotLast
	}
	if n == 0 {
		return errTEEmpty
	}
	return nil
}

// expectation handles Expect (RFC 9110 §10.1.1).
func (p *parser) expectation(v []byte) error {
	var other bool
	forEachElement(v, func(e []byte) {
		if equalLower(e, "100-continue") {
			p.expect = true
		} else {
			other = true
		}
	})
	if other {
		// RFC 9110 §10.1.1: "A server that receives an Expect field value
		// containing a member other than 100-continue MAY respond with a 417".
		return errExpectation
	}
	return nil
}

// forEachElement calls fn with each non-empty element of a comma-separated list
// (RFC 9110 §5.6.1), OWS trimmed, and returns how many there were. Empty elements
// are ignored as §5.6.1.2 requires.
func forEachElement(v []byte, fn func(e []byte)) int {
	n := 0
	for len(v) > 0 {
		var e []byte
		if c := bytes.IndexByte(v, ','); c >= 0 {
			e, v = v[:c], v[c+1:]
		} else {
			e, v = v, nil
		}
		for len(e) > 0 && (e[0] == ' ' || e[0] == '\t') {
			e = e[1:]
		}
		for len(e) > 0 && (e[len(e)-1] == ' ' || e[len(e)-1] == '\t') {
			e = e[:len(e)-1]
		}
		if len(e) > 0 {
			n++
			fn(e)
		}
	}
	return n
}

// finish applies the rules that need the whole header section.
func (p *parser) finish(n int) error {
	r := p.r
	if p.hosts == 0 && r.Minor == 1 {
		// RFC 9112 §3.2: "A server MUST respond with a 400 (Bad Request) status
		// code to any HTTP/1.1 request message that lacks a Host header field".
		return errNoHost
	}
	if p.te {
		if r.ContentLength >= 0 {
			// RFC 9112 §6.3 item 3: Transfer-Encoding overrides Content-Length,
			// and "Such a message might indicate an attempt to perform request
			// smuggling (Section 11.2)". We refuse it rather than guess which one
			// an intermediary used (CVE-2019-18277 and kin).
			return errTEWithCL
		}
		if p.teUnknown {
			// RFC 9112 §6.1: "A server that receives a request message with a
			// transfer coding it does not understand SHOULD respond with 501".
			// We decode chunked only.
			return errTransferCoding
		}
		r.Chunked = true
	}
	if r.ContentLength > p.maxBody {
		return errBodyTooLarge // RFC 9110 §15.5.14
	}
	if r.Minor == 1 {
		// RFC 9112 §9.3: HTTP/1.1 defaults to persistent connections.
		r.KeepAlive = !p.connClose
		// RFC 9110 §10.1.1: a 100-continue expectation in HTTP/1.0 is ignored.
		r.Expect100 = p.expect
		// RFC 7540 §3.2 (h2c upgrade; RFC 9110 §7.8 ignores Upgrade in HTTP/1.0).
		r.UpgradeH2C = p.upgradeH2C && p.connUpg && p.connH2S && p.h2s == 1
		r.Upgrade = p.upgradeAny && p.connUpg
	} else {
		r.KeepAlive = p.connKeep && !p.connClose
	}
	if !r.UpgradeH2C {
		r.HTTP2Settings = nil
	}
	r.HeadLen = n
	return nil
}
