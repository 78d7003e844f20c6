package h1

import (
	"strings"
	"testing"
)

// scanTargetRef is scanTarget one byte at a time.
func scanTargetRef(b []byte, j int) int {
	for j < len(b) && charClass[b[j]]&cTarget != 0 {
		j++
	}
	return j
}

// TestScanTarget: the end of a request-target is found at every offset within a
// word, whatever byte ends it (space, CTL, DEL, '#', non-ASCII), and bytes that
// the SWAR tests could flag above the end do not move it.
func TestScanTarget(t *testing.T) {
	for _, stop := range []byte{' ', '\t', '\r', 0, 0x7f, '#', 0x80, 0xff, 0x20} {
		for n := range 20 {
			for _, after := range []string{"", " HTTP/1.1\r\n", "\x00\x01", "\xff#"} {
				b := []byte(strings.Repeat("a", n) + string(stop) + after)
				if got, want := scanTarget(b, 0), scanTargetRef(b, 0); got != want || got != n {
					t.Fatalf("scanTarget(%q) = %d, want %d", b, got, n)
				}
			}
		}
	}
	for n := range 20 {
		b := []byte(strings.Repeat("/", n))
		if got := scanTarget(b, 0); got != n {
			t.Fatalf("scanTarget(%q) = %d, want %d", b, got, n)
		}
	}
}

// FuzzScanTarget: scanTarget agrees with the byte loop at every start.
func FuzzScanTarget(f *testing.F) {
	f.Add([]byte("/bench HTTP/1.1\r\n"), 0)
	f.Add([]byte("/a#b\x00\x01\x7f\x80"), 1)
	f.Fuzz(func(t *testing.T, b []byte, j int) {
		if j < 0 || j > len(b) {
			return
		}
		if got, want := scanTarget(b, j), scanTargetRef(b, j); got != want {
			t.Fatalf("scanTarget(%q, %d) = %d, want %d", b, j, got, want)
		}
	})
}
