package h1

import (
	"bytes"
	"errors"
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
