// Package poison overwrites recycled request buffers under the race detector, so
// that a test that keeps a borrowed value (a header, a parameter, a body slice)
// past its handler reads garbage and fails loudly instead of passing by luck.
// In normal builds Enabled is false and Fill compiles to nothing.
package poison

// Byte is what recycled buffers are filled with: not ASCII, not UTF-8, so a
// poisoned string never equals a value a test expects.
const Byte = 0xDB

// Fill overwrites b with Byte when Enabled (race builds).
func Fill(b []byte) {
	if !Enabled {
		return
	}
	for i := range b {
		b[i] = Byte
	}
}
