package h1

// Byte classes, one table so that a scan touches one cache line per byte value.
const (
	cTchar  = 1 << iota // token character, RFC 9110 §5.6.2
	cValue              // field-value byte: VCHAR, obs-text, SP, HTAB (RFC 9110 §5.5)
	cTarget             // request-target byte we accept (visible ASCII but '#')
)

var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c == '\t' || c == ' ' || c >= 0x80:
			t[c] |= cValue
		case c > 0x20 && c < 0x7f:
			t[c] |= cValue | cTarget
		}
		if c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			t[c] |= cTchar
		}
	}
	for _, c := range []byte("!#$%&'*+-.^_`|~") {
		t[c] |= cTchar
	}
	// RFC 9112 §3.2: a request-target never carries a fragment.
	t['#'] &^= cTarget
	return t
}()

// lower maps ASCII upper-case letters to lower case and every other byte to itself.
var lower = func() (t [256]byte) {
	for c := range t {
		t[c] = byte(c)
		if c >= 'A' && c <= 'Z' {
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	return t
}()

// equalLower reports whether b equals s ignoring ASCII case; s must be lower case.
func equalLower(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower[b[i]] != s[i] {
			return false
		}
	}
	return true
}
