package h1

import (
	"bytes"
)

// Bounds of the chunked framing (RFC 9112 §7.1), beyond which a body is refused.
const (
	// maxChunkLine bounds a chunk-size line with its extensions and CRLF (400).
	maxChunkLine = 4 << 10
	// maxTrailerBytes bounds the trailer section including its final CRLF (431).
	maxTrailerBytes = 8 << 10
	// maxChunkSizeDigits: 16 hex digits hold any int64 (more is refused, 400).
	maxChunkSizeDigits = 16
	// maxChunkOverhead bounds the framing bytes (size lines with their extensions,
	// and the CRLF after each chunk's data) a body may carry beyond an allowance of
	// 16 bytes plus twice the data per chunk (400). See sizeLine.
	maxChunkOverhead = 16 << 10
)

var (
	errChunkSize      = &Error{Status: 400, Reason: "invalid chunk size"}
	errChunkExt       = &Error{Status: 400, Reason: "invalid chunk extension"}
	errChunkLine      = &Error{Status: 400, Reason: "chunk size line too long"}
	errChunkCRLF      = &Error{Status: 400, Reason: "chunk data not followed by CRLF"}
	errChunkOverhead  = &Error{Status: 400, Reason: "too much chunked framing for its data"}
	errTrailerField   = &Error{Status: 400, Reason: "invalid trailer field"}
	errTrailerTooLong = &Error{Status: 431, Reason: "trailer section too large"}
)

// Decoder states.
const (
	stSize    = iota // at a chunk-size line
	stData           // inside chunk data; remain bytes left
	stDataCR         // expecting the CR after chunk data
	stDataLF         // expecting the LF after chunk data
	stTrailer        // at a trailer field line or the final CRLF
	stDone           // the body is complete
)

// ChunkedDecoder decodes a chunked message body incrementally (RFC 9112 §7.1). The
// zero value is ready; Reset prepares it for the next body. It is owned by whoever
// owns the connection (the event loop) and is not safe for concurrent use.
//
// Line ends: chunked framing requires CRLF everywhere (after a chunk-size line, after
// chunk data, after each trailer field and at the end). The bare-LF leniency that
// ParseHead applies to a request head (RFC 9112 §2.2) is deliberately not applied
// inside a body: disagreement between servers and proxies about chunk line ends is
// what the 2024-2025 "funky chunks" request-smuggling variants exploit. For the same
// reason everything the grammar leaves out is refused rather than skipped: a bare
// CR or LF inside a chunk extension, an empty extension ("5;"), whitespace inside
// or before a chunk size, "+" or "0x", more than 16 hex digits, chunk data longer
// than its size, and a body whose framing outweighs its data (CVE-2023-39326).
// After any refusal the connection closes, so no byte of the body is ever read as
// the next request.
type ChunkedDecoder struct {
	state  uint8
	remain int64 // data bytes left in the current chunk
	total  int64 // decoded bytes so far
	excess int64 // framing bytes beyond the allowance (see sizeLine)

	tlen     int     // bytes of the trailer section seen so far
	tbuf     []byte  // copied trailer names and values
	tspans   []int32 // per trailer field: name start, value start, value end in tbuf
	trailers []Field // built from tbuf and tspans once the body is done
}

// Reset prepares d for a new body, keeping its buffers. Fields returned by Trailers
// become invalid.
func (d *ChunkedDecoder) Reset() {
	d.state, d.remain, d.total, d.excess, d.tlen = stSize, 0, 0, 0, 0
	if cap(d.tbuf) > 2*maxTrailerBytes {
		d.tbuf = nil
	}
	d.tbuf = d.tbuf[:0]
	d.tspans = d.tspans[:0]
	clear(d.trailers)
	d.trailers = d.trailers[:0]
}

// Trailers returns the trailer fields that followed the last chunk, in arrival
// order, once Decode reported done. Names and values are copies owned by d: they are
// valid until the next Reset.
func (d *ChunkedDecoder) Trailers() []Field {
	return d.trailers
}

// Decode consumes chunked framing from in and appends the decoded data to dst,
// returning the bytes of in it consumed and the grown dst. done is true once the last
// chunk, the trailer section and its final CRLF are consumed; Decode then consumes
// nothing more (the bytes after the body belong to the next request).
//
// When in ends mid-frame, Decode consumes what it can and returns done=false with a
// nil error: chunk data is consumed as it arrives, but a partial chunk-size line or
// trailer line is not, so the caller presents the unconsumed bytes again followed by
// more. maxBody bounds the total decoded size (413 when exceeded; <= 0 means
// DefaultMaxBodySize). Errors are *Error values carrying the status to answer, after
// which the connection must be closed.
func (d *ChunkedDecoder) Decode(in, dst []byte, maxBody int64) (consumed int, out []byte, done bool, err error) {
	if maxBody <= 0 {
		maxBody = DefaultMaxBodySize
	}
	out = dst
	i := 0
	for i < len(in) {
		switch d.state {
		case stSize:
			n, err := d.sizeLine(in[i:], maxBody)
			if err != nil || n == 0 {
				return i, out, false, err
			}
			i += n
		case stData:
			k := len(in) - i
			if int64(k) > d.remain {
				k = int(d.remain)
			}
			out = append(out, in[i:i+k]...)
			i += k
			d.remain -= int64(k)
			d.total += int64(k)
			if d.remain == 0 {
				d.state = stDataCR
			}
		case stDataCR:
			// RFC 9112 §7.1: chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF.
			// Anything else after the data means the size and the data disagree.
			if in[i] != '\r' {
				return i, out, false, errChunkCRLF
			}
			i++
			d.state = stDataLF
		case stDataLF:
			if in[i] != '\n' {
				return i, out, false, errChunkCRLF
			}
			i++
			d.state = stSize
		case stTrailer:
			n, err := d.trailerLine(in[i:])
			if err != nil || n == 0 {
				return i, out, false, err
			}
			i += n
			if d.state == stDone {
				return i, out, true, nil
			}
		default: // stDone
			return i, out, true, nil
		}
	}
	return i, out, d.state == stDone, nil
}

// sizeLine parses "chunk-size [ chunk-ext ] CRLF" at the start of b. It returns 0
// and no error when the line is incomplete.
func (d *ChunkedDecoder) sizeLine(b []byte, maxBody int64) (int, error) {
	lf := bytes.IndexByte(b[:min(len(b), maxChunkLine)], '\n')
	if lf < 0 {
		if len(b) >= maxChunkLine {
			return 0, errChunkLine // extensions are skipped, but not without bound
		}
		return 0, nil
	}
	if lf == 0 || b[lf-1] != '\r' {
		// RFC 9112 §7.1: chunk = chunk-size [ chunk-ext ] CRLF ... A bare LF
		// (after the size or inside an extension) or an empty line is refused:
		// "funky chunks" smuggling relies on parsers that disagree on line ends.
		return 0, errChunkSize
	}
	line := b[:lf-1]
	// chunk-size = 1*HEXDIG
	var size uint64
	k := 0
	for ; k < len(line); k++ {
		v := unhex(line[k])
		if v < 0 {
			break
		}
		if k == maxChunkSizeDigits {
			return 0, errChunkSize
		}
		size = size<<4 | uint64(v)
	}
	if k == 0 || size > 1<<63-1 {
		return 0, errChunkSize
	}
	if !validChunkExt(line[k:]) {
		return 0, errChunkExt
	}
	// CVE-2023-39326 (Go's net/http): extensions are skipped, so a client could
	// make the server read megabytes of them around a few bytes of data. As Go
	// does, each chunk is allowed 16 bytes of framing plus twice its data size; what
	// exceeds that, summed over the body, must stay within maxChunkOverhead. A
	// client streaming one byte per chunk stays at zero; 16 KiB of extensions
	// beyond the allowance is refused.
	d.excess += int64(lf+1) + 2 - 16 - 2*int64(min(size, 1<<40))
	d.excess = max(d.excess, 0)
	if d.excess > maxChunkOverhead {
		return 0, errChunkOverhead
	}
	if size == 0 {
		d.state = stTrailer // last-chunk
		return lf + 1, nil
	}
	if int64(size) > maxBody-d.total {
		return 0, errBodyTooLarge // RFC 9110 §15.5.14, before reading the data
	}
	d.remain = int64(size)
	d.state = stData
	return lf + 1, nil
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// validChunkExt checks the extensions after a chunk size, which are otherwise
// ignored (RFC 9112 §7.1.1):
//
//	chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
//	chunk-ext-name = token
//	chunk-ext-val  = token / quoted-string
func validChunkExt(e []byte) bool {
	i := 0
	bws := func() {
		for i < len(e) && (e[i] == ' ' || e[i] == '\t') {
			i++
		}
	}
	token := func() bool {
		s := i
		for i < len(e) && charClass[e[i]]&cTchar != 0 {
			i++
		}
		return i > s
	}
	for i < len(e) {
		bws()
		if i == len(e) || e[i] != ';' {
			return false // whitespace must lead to ';'
		}
		i++
		bws()
		if !token() {
			return false
		}
		bws()
		if i == len(e) || e[i] == ';' {
			continue
		}
		if e[i] != '=' {
			return false
		}
		i++
		bws()
		if i < len(e) && e[i] == '"' {
			if !quotedString(e, &i) {
				return false
			}
		} else if !token() {
			return false
		}
	}
	return true
}

// quotedString skips a quoted-string (RFC 9110 §5.6.4) starting at e[*i] == '"'.
func quotedString(e []byte, i *int) bool {
	for j := *i + 1; j < len(e); j++ {
		switch c := e[j]; {
		case c == '"':
			*i = j + 1
			return true
		case c == '\\':
			// quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
			j++
			if j == len(e) || charClass[e[j]]&cValue == 0 {
				return false
			}
		case charClass[c]&cValue == 0:
			return false // qdtext excludes CTLs (and CR)
		}
	}
	return false
}

// trailerLine parses one trailer field line, or the final CRLF, at the start of b
// (RFC 9112 §7.1.2). It returns 0 and no error when the line is incomplete.
func (d *ChunkedDecoder) trailerLine(b []byte) (int, error) {
	budget := maxTrailerBytes - d.tlen
	lf := bytes.IndexByte(b[:min(len(b), budget)], '\n')
	if lf < 0 {
		if len(b) >= budget {
			return 0, errTrailerTooLong
		}
		return 0, nil
	}
	if lf == 0 || b[lf-1] != '\r' {
		return 0, errTrailerField // bare LF
	}
	d.tlen += lf + 1
	line := b[:lf-1]
	if len(line) == 0 {
		d.finishTrailers()
		return lf + 1, nil
	}
	name, value, ok := fieldLine(line)
	if !ok {
		return 0, errTrailerField
	}
	start := len(d.tbuf)
	d.tbuf = append(d.tbuf, name...)
	mid := len(d.tbuf)
	d.tbuf = append(d.tbuf, value...)
	d.tspans = append(d.tspans, int32(start), int32(mid), int32(len(d.tbuf)))
	return lf + 1, nil
}

func (d *ChunkedDecoder) finishTrailers() {
	d.state = stDone
	d.trailers = d.trailers[:0]
	for k := 0; k+2 < len(d.tspans); k += 3 {
		s, m, e := d.tspans[k], d.tspans[k+1], d.tspans[k+2]
		d.trailers = append(d.trailers, Field{Name: d.tbuf[s:m:m], Value: d.tbuf[m:e:e]})
	}
}

// fieldLine splits a complete field line without its CRLF into name and value by the
// header field rules of ParseHead (RFC 9112 §5): a token, ':' with no whitespace
// before it, OWS, a value of VCHAR / obs-text / SP / HTAB, OWS. A line starting with
// whitespace (obs-fold) or holding a CR, NUL or other CTL is refused.
func fieldLine(line []byte) (name, value []byte, ok bool) {
	j := 0
	for j < len(line) && charClass[line[j]]&cTchar != 0 {
		j++
	}
	if j == 0 || j == len(line) || line[j] != ':' {
		return nil, nil, false
	}
	name = line[:j]
	v := line[j+1:]
	for _, c := range v {
		if charClass[c]&cValue == 0 {
			return nil, nil, false
		}
	}
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return name, v, true
}
