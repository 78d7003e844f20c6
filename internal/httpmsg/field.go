package httpmsg

// ValidResponseField reports whether a response field may be sent: its name is a
// token (RFC 9110 §5.1) and its value holds no CR, LF or NUL (RFC 9110 §5.5; RFC
// 9113 §8.2.1). The HTTP/1.1 and HTTP/2 writers drop any other field (response
// splitting, CWE-113); celeristest applies the same rule. The writers use faster
// equivalents of their own.
func ValidResponseField(name, value string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isTchar(name[i]) {
			return false
		}
	}
	for i := 0; i < len(value); i++ {
		if b := value[i]; b == '\r' || b == '\n' || b == 0 {
			return false
		}
	}
	return true
}

// isTchar reports whether b is a tchar (RFC 9110 §5.6.2).
func isTchar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
