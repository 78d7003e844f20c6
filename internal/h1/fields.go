package h1

import (
	"bytes"
	"encoding/binary"
)

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

func hasZero(x uint64) uint64 { return (x - lsb) &^ x & msb }

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
