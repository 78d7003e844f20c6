package celerish3

import "unsafe"

// b2s views b as a string without copying: b must not change while the string
// is used.
func b2s(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// s2b views s as a byte slice without copying: the slice must not be written.
func s2b(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
