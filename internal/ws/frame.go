package ws

import (
	"encoding/binary"
	"errors"
)

// Opcode is a frame's opcode (RFC 6455 §5.2).
type Opcode uint8

// Opcodes (RFC 6455 §5.2, §11.8).
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

// IsControl reports whether op is a control opcode (close, ping, pong, or a
// reserved control opcode 0xB-0xF).
func (op Opcode) IsControl() bool { return op&0x8 != 0 }

// Header is a parsed frame header.
type Header struct {
	Fin    bool
	RSV1   bool // permessage-deflate's "compressed" bit (RFC 7692 §6)
	RSV2   bool
	RSV3   bool
	Op     Opcode
	Masked bool
	Mask   [4]byte
	Length int64 // payload length
}

// MaxHeaderLen is the longest frame header: 2 bytes, a 64-bit length, a mask key.
const MaxHeaderLen = 14

// Codec errors. Each maps to a close code (CloseCodeFor).
var (
	ErrNeedMore        = errors.New("ws: need more bytes")
	ErrReservedBits    = errors.New("ws: reserved bits set without an extension that defines them")
	ErrReservedOpcode  = errors.New("ws: reserved opcode")
	ErrControlTooLong  = errors.New("ws: control frame payload over 125 bytes")
	ErrControlFragment = errors.New("ws: fragmented control frame")
	ErrLengthEncoding  = errors.New("ws: payload length not in its shortest form, or over 2^63-1")
	ErrUnmasked        = errors.New("ws: unmasked frame from a client")
	ErrMasked          = errors.New("ws: masked frame from a server")
	ErrBadUTF8         = errors.New("ws: invalid UTF-8 in a text message or close reason")
	ErrBadCloseCode    = errors.New("ws: invalid close code")
	ErrClosePayload    = errors.New("ws: close frame with a 1-byte payload")
	ErrContinuation    = errors.New("ws: continuation frame without a message in progress")
	ErrFragmentStart   = errors.New("ws: new data frame while a fragmented message is in progress")
	ErrMessageTooBig   = errors.New("ws: message over the configured maximum")
)

// ParseHeader parses the frame header at the start of b. It returns the header's
// length, or ErrNeedMore when b holds only part of it. fromClient selects the
// masking rule (RFC 6455 §5.1: a server MUST close the connection on an unmasked
// client frame; a client, on a masked server frame). rsv1OK allows RSV1 (set by
// permessage-deflate on a message's first frame; the caller checks where).
//
// Rules checked here, each a MUST of RFC 6455 §5.2 and §5.5: reserved bits
// without a negotiated extension, reserved opcodes, control frames fragmented or
// longer than 125 bytes, the length in its minimal encoding with the 64-bit
// form's most significant bit clear.
func ParseHeader(b []byte, h *Header, fromClient, rsv1OK bool) (int, error) {
	if len(b) < 2 {
		return 0, ErrNeedMore
	}
	b0, b1 := b[0], b[1]
	h.Fin = b0&0x80 != 0
	h.RSV1 = b0&0x40 != 0
	h.RSV2 = b0&0x20 != 0
	h.RSV3 = b0&0x10 != 0
	h.Op = Opcode(b0 & 0x0f)
	h.Masked = b1&0x80 != 0
	if h.RSV2 || h.RSV3 || (h.RSV1 && !rsv1OK) {
		return 0, ErrReservedBits
	}
	switch h.Op {
	case OpContinuation, OpText, OpBinary, OpClose, OpPing, OpPong:
	default:
		return 0, ErrReservedOpcode
	}
	if h.Masked != fromClient {
		if fromClient {
			return 0, ErrUnmasked
		}
		return 0, ErrMasked
	}
	n := 2
	l := int64(b1 & 0x7f)
	switch l {
	case 126:
		if len(b) < 4 {
			return 0, ErrNeedMore
		}
		l = int64(binary.BigEndian.Uint16(b[2:]))
		if l < 126 {
			return 0, ErrLengthEncoding
		}
		n = 4
	case 127:
		if len(b) < 10 {
			return 0, ErrNeedMore
		}
		u := binary.BigEndian.Uint64(b[2:])
		if u>>63 != 0 || u <= 0xffff {
			return 0, ErrLengthEncoding
		}
		l = int64(u)
		n = 10
	}
	if h.Op.IsControl() {
		if !h.Fin {
			return 0, ErrControlFragment
		}
		if l > 125 {
			return 0, ErrControlTooLong
		}
		if h.RSV1 {
			return 0, ErrReservedBits // RFC 7692 §6: RSV1 only on data frames
		}
	}
	h.Length = l
	if h.Masked {
		if len(b) < n+4 {
			return 0, ErrNeedMore
		}
		copy(h.Mask[:], b[n:n+4])
		n += 4
	}
	return n, nil
}

// AppendHeader appends a frame header. A server's frames are unmasked (masked is
// false); a client's carry mask.
func AppendHeader(dst []byte, fin, rsv1 bool, op Opcode, length int, masked bool, mask [4]byte) []byte {
	b0 := byte(op)
	if fin {
		b0 |= 0x80
	}
	if rsv1 {
		b0 |= 0x40
	}
	var mb byte
	if masked {
		mb = 0x80
	}
	switch {
	case length <= 125:
		dst = append(dst, b0, mb|byte(length))
	case length <= 0xffff:
		dst = append(dst, b0, mb|126, byte(length>>8), byte(length))
	default:
		dst = append(dst, b0, mb|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(length))
	}
	if masked {
		dst = append(dst, mask[:]...)
	}
	return dst
}

// AppendFrame appends a whole unmasked frame (a server's).
func AppendFrame(dst []byte, fin bool, op Opcode, payload []byte) []byte {
	dst = AppendHeader(dst, fin, false, op, len(payload), false, [4]byte{})
	return append(dst, payload...)
}

// Mask XORs b in place with key, starting at position pos of the payload (so a
// payload unmasked in pieces continues where the last piece stopped). It returns
// the position after b. RFC 6455 §5.3.
func Mask(key [4]byte, pos int, b []byte) int {
	k := [4]byte{key[pos&3], key[(pos+1)&3], key[(pos+2)&3], key[(pos+3)&3]}
	if len(b) >= 8 {
		k32 := binary.LittleEndian.Uint32(k[:])
		k64 := uint64(k32) | uint64(k32)<<32
		for len(b) >= 32 {
			binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k64)
			binary.LittleEndian.PutUint64(b[8:], binary.LittleEndian.Uint64(b[8:])^k64)
			binary.LittleEndian.PutUint64(b[16:], binary.LittleEndian.Uint64(b[16:])^k64)
			binary.LittleEndian.PutUint64(b[24:], binary.LittleEndian.Uint64(b[24:])^k64)
			b = b[32:]
			pos += 32
		}
		for len(b) >= 8 {
			binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k64)
			b = b[8:]
			pos += 8
		}
	}
	for i := range b {
		b[i] ^= k[i&3]
	}
	return pos + len(b)
}

// MaskCopy writes src masked with key (its byte at position pos) into dst, which
// must be at least as long, and returns the position after it: Mask and a copy in
// one pass.
func MaskCopy(key [4]byte, pos int, dst, src []byte) int {
	k := [4]byte{key[pos&3], key[(pos+1)&3], key[(pos+2)&3], key[(pos+3)&3]}
	dst = dst[:len(src)]
	if len(src) >= 8 {
		k32 := binary.LittleEndian.Uint32(k[:])
		k64 := uint64(k32) | uint64(k32)<<32
		for len(src) >= 32 {
			d, s := dst[:32], src[:32]
			binary.LittleEndian.PutUint64(d, binary.LittleEndian.Uint64(s)^k64)
			binary.LittleEndian.PutUint64(d[8:], binary.LittleEndian.Uint64(s[8:])^k64)
			binary.LittleEndian.PutUint64(d[16:], binary.LittleEndian.Uint64(s[16:])^k64)
			binary.LittleEndian.PutUint64(d[24:], binary.LittleEndian.Uint64(s[24:])^k64)
			dst, src = dst[32:], src[32:]
			pos += 32
		}
		for len(src) >= 8 {
			binary.LittleEndian.PutUint64(dst, binary.LittleEndian.Uint64(src)^k64)
			dst, src = dst[8:], src[8:]
			pos += 8
		}
	}
	for i := range src {
		dst[i] = src[i] ^ k[i&3]
	}
	return pos + len(src)
}
