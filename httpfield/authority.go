package httpfield

// Authority validation, shared by HTTP/1.1's Host (RFC 9112 §3.2) and the
// :authority of HTTP/2 (RFC 9113 §8.3.1) and HTTP/3 (RFC 9114 §4.3.1). Both carry the authority of an http or https URI
// without userinfo (RFC 9110 §4.2.1, §4.2.4):
//
//	authority   = uri-host [ ":" port ]        ; RFC 3986 §3.2, userinfo excluded
//	uri-host    = IP-literal / IPv4address / reg-name
//	IP-literal  = "[" ( IPv6address / IPvFuture ) "]"
//	IPvFuture   = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
//	reg-name    = *( unreserved / pct-encoded / sub-delims )
//	port        = *DIGIT
//
// An http URI's host is never empty (RFC 9110 §4.2.1), so ":80" is refused;
// "example.com:" (an empty port) is allowed by RFC 3986 and kept.

const (
	aReg  = 1 << iota // unreserved / sub-delims (reg-name bytes other than '%')
	aHex              // HEXDIG
	aIPv6             // bytes of an IPv6address: HEXDIG / ":" / "."
)

var authClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] |= aReg
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] |= aReg
	}
	for c := '0'; c <= '9'; c++ {
		t[c] |= aReg | aHex | aIPv6
	}
	for _, c := range "abcdefABCDEF" {
		t[c] |= aHex | aIPv6
	}
	for _, c := range "-._~!$&'()*+,;=" { // unreserved punctuation, sub-delims
		t[c] |= aReg
	}
	t[':'] |= aIPv6
	t['.'] |= aIPv6
	return t
}()

// ValidAuthority reports whether a is uri-host [ ":" port ] with a non-empty host:
// no userinfo, spaces, control or non-ASCII bytes, a port of digits only, and
// percent-encodings of two hex digits. a is a string or a byte slice. The common case (a name or IPv4 address and
// a port) is one table lookup per byte.
func ValidAuthority[T ~string | ~[]byte](a T) bool {
	// Fast path: a reg-name without '%' (an IPv4 address is one), then an
	// optional ":" and digits. The port is found from the end; the host's bytes
	// are checked four at a time (their classes ANDed, as h1's allOfClass does).
	h := a
	j := len(h)
	for j > 0 && h[j-1]-'0' <= 9 {
		j--
	}
	if j > 0 && h[j-1] == ':' {
		h = h[:j-1]
	}
	if len(h) > 0 && allReg(h) {
		return true
	}
	return validAuthority(a)
}

// allReg reports whether every byte of h is unreserved or a sub-delim.
func allReg[T ~string | ~[]byte](h T) bool {
	acc := uint8(aReg)
	for len(h) >= 4 {
		acc &= authClass[h[0]] & authClass[h[1]] & authClass[h[2]] & authClass[h[3]]
		h = h[4:]
	}
	for i := 0; i < len(h); i++ {
		acc &= authClass[h[i]]
	}
	return acc&aReg != 0
}

// validAuthority is ValidAuthority for the cases its fast path does not decide.
func validAuthority[T ~string | ~[]byte](a T) bool {
	if len(a) == 0 {
		return false
	}
	var port T
	if a[0] == '[' {
		end := -1
		for i := 1; i < len(a); i++ {
			if a[i] == ']' {
				end = i
				break
			}
		}
		if end < 0 || !validIPLiteral(a[1:end]) {
			return false
		}
		rest := a[end+1:]
		if len(rest) > 0 {
			if rest[0] != ':' {
				return false
			}
			port = rest[1:]
		}
	} else {
		host := a
		for i := len(a) - 1; i >= 0; i-- {
			if a[i] == ':' {
				host, port = a[:i], a[i+1:]
				break
			}
		}
		if len(host) == 0 || !validRegName(host) {
			return false
		}
	}
	for i := 0; i < len(port); i++ {
		if port[i] < '0' || port[i] > '9' {
			return false
		}
	}
	return true
}

// validRegName checks reg-name (an IPv4address is a reg-name too).
func validRegName[T ~string | ~[]byte](h T) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		if authClass[c]&aReg != 0 {
			continue
		}
		if c != '%' || i+2 >= len(h) || authClass[h[i+1]]&aHex == 0 || authClass[h[i+2]]&aHex == 0 {
			return false
		}
		i += 2
	}
	return true
}

// validIPLiteral checks the text between '[' and ']': an IPv6 address (its bytes;
// the address itself is not parsed) or an IPvFuture.
func validIPLiteral[T ~string | ~[]byte](s T) bool {
	if len(s) == 0 {
		return false
	}
	if s[0] == 'v' || s[0] == 'V' {
		i := 1
		for i < len(s) && authClass[s[i]]&aHex != 0 {
			i++
		}
		if i == 1 || i >= len(s)-1 || s[i] != '.' {
			return false
		}
		for i++; i < len(s); i++ {
			if c := s[i]; authClass[c]&aReg == 0 && c != ':' {
				return false
			}
		}
		return true
	}
	colons := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if authClass[c]&aIPv6 == 0 {
			return false
		}
		if c == ':' {
			colons++
		}
	}
	return colons >= 2
}
