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

// CheckField checks a request field as HTTP/2 and HTTP/3 receive it (RFC 9113
// §8.2.1, RFC 9114 §4.2, RFC 9110 §5): a name of lower-case token characters
// (after the ':' of a pseudo-header; "A request or response containing
// uppercase characters in field names MUST be treated as malformed"), a value
// without NUL, CR or LF and without leading or trailing whitespace; :authority
// and Host carry an authority without userinfo (RFC 9113 §8.3.1, RFC 9114
// §4.3.1: uri-host [ ":" port ], RFC 9110 §4.2, RFC 3986 §3.2, never empty).
// It returns "" for a valid field, otherwise why the request is malformed.
func CheckField(name, value string) string {
	if name == "" {
		return "empty field name"
	}
	start := 0
	if name[0] == ':' {
		start = 1
	}
	for i := start; i < len(name); i++ {
		if !LowerTchar[name[i]] {
			return "invalid field name"
		}
	}
	for i := 0; i < len(value); i++ {
		if b := value[i]; b == 0 || b == '\r' || b == '\n' {
			return "invalid field value"
		}
	}
	if n := len(value); n > 0 && (isSpace(value[0]) || isSpace(value[n-1])) {
		return "field value with surrounding whitespace"
	}
	if (name == ":authority" || name == "host") && !ValidAuthority([]byte(value)) {
		return "invalid authority"
	}
	return ""
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' }

// LowerTchar marks the token characters of RFC 9110 §5.6.2 except upper case:
// the characters of an HTTP/2 or HTTP/3 field name. Read only.
var LowerTchar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()
