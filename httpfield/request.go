package httpfield

// CheckRequestField checks one field of a request as HTTP/2 and HTTP/3 receive
// it (RFC 9113 §8.2.1, RFC 9114 §4.2, RFC 9110 §5): a name of lower-case token
// characters (after the ':' of a pseudo-header; "A request or response
// containing uppercase characters in field names MUST be treated as
// malformed"), a value without NUL, CR or LF and without leading or trailing
// whitespace; :authority and Host carry an authority without userinfo (RFC
// 9113 §8.3.1, RFC 9114 §4.3.1: uri-host [ ":" port ], RFC 9110 §4.2, RFC 3986
// §3.2, never empty). It returns "" for a valid field, otherwise why the request
// is malformed. The rules that depend on the field's place (pseudo-header
// fields, connection-specific fields) are RequestHead's.
func CheckRequestField(name, value string) string {
	if name == "" {
		return "empty field name"
	}
	start := 0
	if name[0] == ':' {
		start = 1
	}
	for i := start; i < len(name); i++ {
		if class[name[i]]&cLowerTchar == 0 {
			return "invalid field name"
		}
	}
	if !SafeValue(value) {
		return "invalid field value"
	}
	if n := len(value); n > 0 && (isSpace(value[0]) || isSpace(value[n-1])) {
		return "field value with surrounding whitespace"
	}
	if (name == ":authority" || name == "host") && !ValidAuthority(value) {
		return "invalid authority"
	}
	return ""
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' }

// CheckRequestTrailer checks one field of a request's trailer section:
// CheckRequestField, then TrailerPlace.
func CheckRequestTrailer(name, value string) string {
	if msg := CheckRequestField(name, value); msg != "" {
		return msg
	}
	return TrailerPlace(name)
}

// TrailerPlace applies the rules on a field's place in an HTTP/2 or HTTP/3
// trailer section, for a name that passed CheckRequestField: no pseudo-header
// field (RFC 9113 §8.1, RFC 9114 §4.3: "Pseudo-header fields MUST NOT appear in
// trailer sections") and no connection-specific field (RFC 9113 §8.2.2, RFC
// 9114 §4.2: in any field section). It returns "" or why the request is
// malformed.
func TrailerPlace(name string) string {
	if name[0] == ':' {
		return "pseudo-header field in trailers"
	}
	if ConnectionSpecific(name) {
		return "connection-specific trailer field"
	}
	return ""
}

// Pseudo-header fields seen, as bits of RequestHead.seen.
const (
	seenMethod uint8 = 1 << iota
	seenScheme
	seenPath
	seenAuthority
	seenProtocol
)

// RequestHead applies the rules on the fields of an HTTP/2 or HTTP/3 request
// header section as a whole (RFC 9113 §8.2.2, §8.3.1; RFC 9114 §4.2, §4.3.1,
// §4.4; RFC 8441 §4 and RFC 9220 §3 for the extended CONNECT), and records the
// pseudo-header fields and the first Host. Give it every field of the section in
// order (Field), then call Check. The zero value is ready; its strings view
// the values given to Field.
type RequestHead struct {
	Method, Scheme, Path, Authority string
	Protocol                        string // :protocol (extended CONNECT)
	Host                            string // the first Host field
	seen                            uint8
	regular                         bool
}

// Field checks one field, its name in lower case: CheckRequestField, then that
// pseudo-header fields come before regular ones, once each, from the request's
// set (:protocol only when allowProtocol: the server sent
// SETTINGS_ENABLE_CONNECT_PROTOCOL), never empty; that no connection-specific
// field appears, and TE only as "trailers". It returns "" or why the request is
// malformed. A regular field that passes is the caller's to keep.
func (h *RequestHead) Field(name, value string, allowProtocol bool) string {
	if msg := CheckRequestField(name, value); msg != "" {
		return msg
	}
	return h.Placed(name, value, allowProtocol)
}

// Placed is Field for a field that passed CheckRequestField already (a reader
// that caches its verdicts): it applies the rules on the field's place only.
func (h *RequestHead) Placed(name, value string, allowProtocol bool) string {
	if name[0] == ':' {
		return h.pseudo(name, value, allowProtocol)
	}
	h.regular = true
	switch {
	case ConnectionSpecific(name):
		// RFC 9113 §8.2.2, RFC 9114 §4.2: "any message containing
		// connection-specific fields MUST be treated as malformed".
		return "connection-specific header field"
	case name == "te":
		// "The only exception to this is the TE header field, which MAY be
		// present in an HTTP/2 [HTTP/3] request; when it is, it MUST NOT
		// contain any value other than "trailers"."
		if !ValidTE(value) {
			return "TE other than trailers"
		}
	case name == "host":
		if h.Host == "" {
			h.Host = value
		}
	}
	return ""
}

// pseudo records a request pseudo-header field.
func (h *RequestHead) pseudo(name, value string, allowProtocol bool) string {
	if h.regular {
		// RFC 9113 §8.3, RFC 9114 §4.3: "All pseudo-header fields MUST appear
		// in the header section before regular header fields."
		return "pseudo-header field after a regular field"
	}
	var bit uint8
	switch name {
	case ":method":
		bit, h.Method = seenMethod, value
	case ":scheme":
		bit, h.Scheme = seenScheme, value
	case ":path":
		bit, h.Path = seenPath, value
	case ":authority":
		bit, h.Authority = seenAuthority, value
	case ":protocol":
		if !allowProtocol {
			return "unknown or response pseudo-header field"
		}
		bit, h.Protocol = seenProtocol, value
	default:
		// "Endpoints MUST treat a request or response that contains undefined
		// or invalid pseudo-header fields as malformed"; a response
		// pseudo-header field (:status) in a request is one.
		return "unknown or response pseudo-header field"
	}
	if h.seen&bit != 0 {
		// Each pseudo-header field appears at most once.
		return "repeated pseudo-header field"
	}
	h.seen |= bit
	if value == "" {
		// ":path ... MUST NOT be empty for http or https URIs"; :method and
		// :scheme are tokens; an empty :authority never passes
		// CheckRequestField.
		return "empty pseudo-header field"
	}
	return ""
}

// Check applies the rules on the pseudo-header fields as a whole, once the
// section ended: the extended CONNECT carries :method, :scheme, :path and
// :authority with :protocol, and only CONNECT carries :protocol (RFC 8441 §4,
// RFC 9220 §3); a CONNECT carries :method and :authority only (RFC 9113 §8.5,
// RFC 9114 §4.4); any other request exactly one :method (a token, RFC 9110
// §9.1), :scheme and :path (origin-form, or "*" for OPTIONS). With
// authorityRule, a request of an http or https URI carries :authority or Host,
// and the same value when both (RFC 9114 §4.3.1 "MUST"; RFC 9113 §8.3.1 makes
// the second a "SHOULD", which HTTP/2 leaves off: a Host may name the same
// entity in another spelling). It returns "" or why the request is malformed.
func (h *RequestHead) Check(authorityRule bool) string {
	if h.seen&seenProtocol != 0 {
		if h.Method != "CONNECT" {
			return ":protocol on a method other than CONNECT"
		}
		if h.seen != seenMethod|seenScheme|seenPath|seenAuthority|seenProtocol {
			return "bad extended CONNECT pseudo-header fields"
		}
		if h.Path[0] != '/' {
			return "bad :path"
		}
		return ""
	}
	if h.Method == "CONNECT" {
		if h.seen != seenMethod|seenAuthority {
			return "bad CONNECT pseudo-header fields"
		}
		return ""
	}
	if h.seen&(seenMethod|seenScheme|seenPath) != seenMethod|seenScheme|seenPath {
		return "missing pseudo-header field"
	}
	for i := 0; i < len(h.Method); i++ {
		if class[h.Method[i]]&cTchar == 0 {
			return "bad :method"
		}
	}
	if h.Path[0] != '/' && !(h.Path == "*" && h.Method == "OPTIONS") {
		return "bad :path"
	}
	if authorityRule && (h.Scheme == "http" || h.Scheme == "https") {
		if h.Authority == "" && h.Host == "" {
			return "no :authority or Host"
		}
		if h.Authority != "" && h.Host != "" && h.Authority != h.Host {
			return ":authority and Host differ"
		}
	}
	return ""
}

// PathQuery splits :path at its first '?' (RFC 3986 §3.4): the path and the
// raw query, "" when there is none.
func (h *RequestHead) PathQuery() (path, query string) {
	for i := 0; i < len(h.Path); i++ {
		if h.Path[i] == '?' {
			return h.Path[:i], h.Path[i+1:]
		}
	}
	return h.Path, ""
}

// HostValue returns the request's authority: :authority, else the Host field
// (RFC 9113 §8.3.1, RFC 9114 §4.3.1).
func (h *RequestHead) HostValue() string {
	if h.Authority != "" {
		return h.Authority
	}
	return h.Host
}
