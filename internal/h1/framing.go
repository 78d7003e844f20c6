package h1

import (
	"bytes"

	"github.com/celeris-dev/celeris/internal/bytesconv"
)

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
			if !r.hostOK.validHost(value) { // httpfield.ValidAuthority, cached
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
