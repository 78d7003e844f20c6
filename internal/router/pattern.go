package router

import "strings"

// tokKind is the kind of one piece of a parsed pattern.
type tokKind uint8

const (
	tokStatic tokKind = iota // literal bytes, matched exactly
	tokParam                 // ":name": one non-empty segment
	tokWild                  // "*name": the rest of the path, possibly empty
)

// token is one piece of a parsed pattern: a static chunk (text is the literal) or a
// parameter (text is its name).
type token struct {
	kind tokKind
	text string
}

// parsePattern splits pattern into tokens. Static chunks alternate with parameters;
// every static chunk that precedes a parameter ends with '/', and every static chunk
// that follows one starts with '/'. It returns a non-empty reason when the pattern is
// malformed:
//
//   - it must start with '/';
//   - ':' and '*' are special only at the start of a segment and are forbidden
//     elsewhere ("/a:b", "/:a:b", "/files*"), so a pattern never means two things;
//   - a parameter name is non-empty, made of letters, digits and '_', and unique
//     within the pattern (":b?" or ":id<re>" is not a parameter named so);
//   - '{' and '}' are forbidden: "/users/{id}" (net/http, chi) would otherwise
//     register a literal path;
//   - a wildcard is the last segment.
func parsePattern(pattern string) (toks []token, reason string) {
	if pattern == "" || pattern[0] != '/' {
		return nil, "pattern must start with '/'"
	}
	if strings.ContainsAny(pattern, "{}") {
		return nil, "'{' and '}' are not pattern syntax: " + syntaxHint
	}
	start := 0 // start of the current static chunk
	for i := 1; i < len(pattern); {
		c := pattern[i]
		if c != ':' && c != '*' {
			i++
			continue
		}
		if pattern[i-1] != '/' {
			return nil, "'" + string(c) + "' must start a path segment"
		}
		end := strings.IndexByte(pattern[i:], '/')
		if end < 0 {
			end = len(pattern)
		} else {
			end += i
		}
		name := pattern[i+1 : end]
		switch {
		case name == "":
			return nil, "empty parameter name"
		case strings.ContainsAny(name, ":*"):
			return nil, "':' and '*' must start a path segment"
		case !validParamName(name):
			return nil, "invalid parameter name " + name + " (letters, digits and '_'): " + syntaxHint
		case c == '*' && end != len(pattern):
			return nil, "wildcard *" + name + " must be the last segment"
		}
		for _, t := range toks {
			if t.kind != tokStatic && t.text == name {
				return nil, "duplicate parameter name " + name
			}
		}
		kind := tokParam
		if c == '*' {
			kind = tokWild
		}
		toks = append(toks, token{kind: tokStatic, text: pattern[start:i]}, token{kind: kind, text: name})
		i, start = end, end
	}
	if start < len(pattern) {
		toks = append(toks, token{kind: tokStatic, text: pattern[start:]})
	}
	return toks, ""
}

// syntaxHint names the supported syntax in the panics of malformed patterns.
const syntaxHint = "use :name for a parameter (one segment) and *name for the rest of the path, e.g. /users/:id, /static/*filepath"

// validParamName reports whether name is letters, digits and '_' only.
func validParamName(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// validMethod reports whether m is an HTTP method token (RFC 9110 §9.1:
// method = token; §5.6.2: token = 1*tchar).
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
