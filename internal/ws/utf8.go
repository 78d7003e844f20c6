package ws

import "unicode/utf8"

// ValidUTF8 reports whether b is valid UTF-8 (RFC 3629; no surrogates, no
// overlong forms, nothing above U+10FFFF), as a text message and a close reason
// must be (RFC 6455 §5.6, §8.1).
func ValidUTF8(b []byte) bool { return utf8.Valid(b) }

// UTF8Validator checks a text message that arrives in pieces (fragments, or a
// frame read in parts): a sequence may be split anywhere, and a piece that already
// cannot be completed fails at once (RFC 6455 §8.1: fail fast is allowed; the
// Autobahn suite's 6.x cases expect it).
type UTF8Validator struct {
	pend [4]byte // the start of a sequence split by the last piece
	n    int     // bytes in pend
}

// Reset forgets any pending partial sequence.
func (v *UTF8Validator) Reset() { v.n = 0 }

// Write checks the next piece. It returns false as soon as the bytes seen so far
// cannot be the start of valid UTF-8.
func (v *UTF8Validator) Write(b []byte) bool {
	if v.n > 0 {
		// Complete the pending sequence from b's first bytes.
		need := seqLen(v.pend[0])
		for v.n < need && len(b) > 0 {
			v.pend[v.n] = b[0]
			v.n++
			b = b[1:]
		}
		if v.n < need {
			return validPrefix(v.pend[:v.n])
		}
		if !utf8.Valid(v.pend[:v.n]) {
			return false
		}
		v.n = 0
	}
	// Fast path: ASCII.
	i := 0
	for i < len(b) && b[i] < utf8.RuneSelf {
		i++
	}
	if i == len(b) {
		return true
	}
	b = b[i:]
	// Find where a trailing incomplete sequence starts (at most 3 bytes back).
	cut := len(b)
	for k := len(b) - 1; k >= 0 && k >= len(b)-3; k-- {
		c := b[k]
		if c&0xC0 != 0x80 { // a start byte (or ASCII)
			if c >= 0xC0 && k+seqLen(c) > len(b) {
				cut = k
			}
			break
		}
	}
	if !utf8.Valid(b[:cut]) {
		return false
	}
	if cut < len(b) {
		v.n = copy(v.pend[:], b[cut:])
		return validPrefix(v.pend[:v.n])
	}
	return true
}

// Done reports whether the message ended on a complete sequence.
func (v *UTF8Validator) Done() bool { return v.n == 0 }

// seqLen is the length of the sequence a start byte announces (0 if invalid).
func seqLen(c byte) int {
	switch {
	case c < 0x80:
		return 1
	case c >= 0xC2 && c <= 0xDF:
		return 2
	case c >= 0xE0 && c <= 0xEF:
		return 3
	case c >= 0xF0 && c <= 0xF4:
		return 4
	}
	return 0
}

// validPrefix reports whether p (shorter than its sequence) can still become a
// valid sequence: the second byte's range depends on the first (RFC 3629 §4).
func validPrefix(p []byte) bool {
	if len(p) == 0 {
		return true
	}
	c := p[0]
	if seqLen(c) == 0 {
		return false
	}
	if len(p) >= 2 {
		lo, hi := byte(0x80), byte(0xBF)
		switch c {
		case 0xE0:
			lo = 0xA0
		case 0xED:
			hi = 0x9F
		case 0xF0:
			lo = 0x90
		case 0xF4:
			hi = 0x8F
		}
		if p[1] < lo || p[1] > hi {
			return false
		}
	}
	for i := 2; i < len(p); i++ {
		if p[i]&0xC0 != 0x80 {
			return false
		}
	}
	return true
}
