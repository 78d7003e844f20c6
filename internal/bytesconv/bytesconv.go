// Package bytesconv holds the module's unsafe string and byte-slice conversions
// (B2S, S2B), number formatting without allocation, and the cached Date header
// value. Elsewhere unsafe serves other ends: internal/bufpool keeps pooled
// buffers as pointers, and internal/engine reads gnet's unexported fields
// (pause.go) and calls write(2) directly (rawwrite_linux.go).
package bytesconv

import (
	"strconv"
	"unsafe"
)

// B2S returns a string that shares b's memory. The string is valid only while b is
// neither modified nor reused; callers document that lifetime.
func B2S(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// S2B returns the bytes of s without copying. The result must never be modified.
func S2B(s string) []byte {
	if s == "" {
		return nil
	}
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// AppendUint appends the decimal form of n to dst.
func AppendUint(dst []byte, n uint64) []byte {
	if n < 10 {
		return append(dst, byte('0'+n))
	}
	return strconv.AppendUint(dst, n, 10)
}

// AppendHex appends the lower-case hexadecimal form of n to dst.
func AppendHex(dst []byte, n uint64) []byte {
	return strconv.AppendUint(dst, n, 16)
}

// ParseUint parses a non-empty run of ASCII digits without sign into n. It reports
// false on any other byte or when the value would exceed max.
func ParseUint(b []byte, max uint64) (n uint64, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (max-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
