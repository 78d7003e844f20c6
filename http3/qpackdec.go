package celerish3

import (
	"golang.org/x/net/http2/hpack"
)

// fieldArena holds the bytes of the literal strings of a stream's field
// sections. It only grows between resets, so a string made from it stays
// valid until reset: a growing append moves later bytes to a new array and
// leaves the old one, which earlier strings still view, untouched.
type fieldArena struct{ b []byte }

// Write appends p (hpack.HuffmanDecode's output).
func (a *fieldArena) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// reset forgets the strings made so far; an arena grown past 64 KiB is
// dropped rather than kept in the pool.
func (a *fieldArena) reset() {
	if cap(a.b) > 64<<10 {
		a.b = nil
	}
	a.b = a.b[:0]
}

// errQPACK is any failure to decode a field section: RFC 9204 §6, "If the
// decoder encounters ... a field line that cannot be decoded, it MUST treat
// this as a connection error of type QPACK_DECOMPRESSION_FAILED".
func errQPACK(reason string) error { return connErr(ErrCodeQPACKDecompressionFailed, reason) }

// decodeSection decodes a field section (RFC 9204 §4.5) that references the
// static table only, as the server's SETTINGS (QPACK_MAX_TABLE_CAPACITY 0)
// allow, and calls fn for each field line. Names and values from the static
// table are the table's constant strings; literals are copied into arena and
// fn gets views of them, valid until arena.reset. Any field line that
// references a dynamic table, a Required Insert Count other than 0 (which
// would also block the stream, RFC 9204 §2.1.2, with no blocked streams
// allowed) and every malformed encoding is QPACK_DECOMPRESSION_FAILED. As in
// github.com/quic-go/qpack's decoder, the sign bit of the Base is not looked
// at: with no dynamic table the Base is never used.
func decodeSection(block []byte, arena *fieldArena, fn func(name, value string) error) error {
	// §4.5.1: the Encoded Field Section Prefix.
	ric, n, err := parsePrefixInt(block, 8)
	if err != nil || n == 0 {
		return errQPACK("truncated section prefix")
	}
	if ric != 0 {
		// §4.5.1.1, §2.2.3: an Encoded Required Insert Count past the
		// maximum entries of a table of capacity 0 (which is 0).
		return errQPACK("required insert count with no dynamic table")
	}
	block = block[n:]
	base, n, err := parsePrefixInt(block, 7)
	if err != nil || n == 0 {
		return errQPACK("truncated section prefix")
	}
	if base != 0 {
		return errQPACK("delta base with no dynamic table")
	}
	block = block[n:]
	for len(block) > 0 {
		b := block[0]
		var name, value string
		switch {
		case b&0x80 != 0: // §4.5.2 Indexed Field Line: 1Txxxxxx
			if b&0x40 == 0 {
				return errQPACK("dynamic table reference")
			}
			idx, n, err := parsePrefixInt(block, 6)
			if err != nil || n == 0 {
				return errQPACK("truncated index")
			}
			if idx >= uint64(len(qpackStatic)) {
				return errQPACK("static index past the table")
			}
			block = block[n:]
			name, value = qpackStatic[idx].name, qpackStatic[idx].value
		case b&0xc0 == 0x40: // §4.5.4 Literal Field Line with Name Reference: 01NTxxxx
			if b&0x10 == 0 {
				return errQPACK("dynamic table reference")
			}
			idx, n, err := parsePrefixInt(block, 4)
			if err != nil || n == 0 {
				return errQPACK("truncated index")
			}
			if idx >= uint64(len(qpackStatic)) {
				return errQPACK("static index past the table")
			}
			block = block[n:]
			name = qpackStatic[idx].name
			if value, block, err = readLiteral(block, 7, arena); err != nil {
				return err
			}
		case b&0xe0 == 0x20: // §4.5.6 Literal Field Line with Literal Name: 001NHxxx
			var err error
			if name, block, err = readLiteral(block, 3, arena); err != nil {
				return err
			}
			if value, block, err = readLiteral(block, 7, arena); err != nil {
				return err
			}
		default: // §4.5.3, §4.5.5: post-base references, to a dynamic table
			return errQPACK("post-base dynamic table reference")
		}
		if err := fn(name, value); err != nil {
			return err
		}
	}
	return nil
}

// readLiteral reads a string literal (RFC 9204 §4.1.2) whose length has an
// n-bit prefix and whose Huffman flag is the bit above it, into arena; the
// string returned views arena.
func readLiteral(block []byte, n uint, arena *fieldArena) (string, []byte, error) {
	if len(block) == 0 {
		return "", nil, errQPACK("truncated field line")
	}
	huffman := block[0]&(1<<n) != 0
	length, k, err := parsePrefixInt(block, n)
	if err != nil || k == 0 {
		return "", nil, errQPACK("truncated string length")
	}
	block = block[k:]
	if uint64(len(block)) < length {
		return "", nil, errQPACK("truncated string")
	}
	raw := block[:length]
	start := len(arena.b)
	if huffman {
		if _, err := hpack.HuffmanDecode(arena, raw); err != nil {
			return "", nil, errQPACK("invalid Huffman code")
		}
	} else {
		arena.b = append(arena.b, raw...)
	}
	return b2s(arena.b[start:len(arena.b):len(arena.b)]), block[length:], nil
}
