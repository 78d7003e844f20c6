// Package keyauth authenticates requests by API key.
//
// The key is read from one place, Config.Lookup: a request header (by default
// "X-API-Key"), the token of an Authorization header of a given scheme
// ("Authorization: Bearer <key>", RFC 6750 §2.1), a query parameter or a cookie.
// It is checked against Config.Keys, compared in constant time (crypto/subtle
// over SHA-256 digests, so neither the length nor the matching prefix of a key
// leaks through timing, and every key is compared so the time does not tell which
// one matched), or by Config.Validator.
//
// A request without a key, or with a wrong one, gets 401 Unauthorized through the
// server's error handler (a *celeris.HTTPError), with the challenge RFC 9110
// §11.6.1 requires of every 401. When the key is read from an Authorization
// scheme the challenge is of that scheme (RFC 6750 §3):
//
//	WWW-Authenticate: Bearer realm="Restricted", error="invalid_token"
//
// For a key in a header, query parameter or cookie it is of the scheme "ApiKey",
// whose parameters say where the key goes, as an OpenAPI apiKey security scheme
// does (in: header, query or cookie; name):
//
//	WWW-Authenticate: ApiKey realm="Restricted", in="header", name="X-API-Key"
//
// The name that Config.Keys gives the accepted key (or what Validator returns) is
// stored in the Context under Config.ContextKey ("apikey"); Name reads it, and
// ratelimit can key its buckets on it.
//
// Keys in a query string end up in access logs and browser history: prefer a
// header. Serve keys over TLS only.
package keyauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Keys or Validator must be set. Zero values
// mean the defaults in brackets.
type Config struct {
	// Keys maps each accepted key to a name for it (the client, the service or
	// the user it belongs to), stored in the Context when it matches.
	Keys map[string]string
	// Validator checks a key instead of Keys and returns the name to store. ok
	// false refuses the request with 401; an error goes to the server's error
	// handler (a 500 unless it is a *celeris.HTTPError). It should compare in
	// constant time (crypto/subtle). key is valid until the handler returns.
	Validator func(c *celeris.Context, key string) (name string, ok bool, err error)
	// Lookup says where the key is: "header:<Name>", "auth:<Scheme>" (the token
	// after the scheme in Authorization), "query:<name>" or "cookie:<name>".
	// It panics at New when malformed. ["header:X-API-Key"]
	Lookup string
	// Realm names the protection space in the challenge ["Restricted"].
	Realm string
	// ContextKey is the Context key of the accepted key's name ["apikey"];
	// "-" stores nothing.
	ContextKey string
	// Skip lets a request through unchecked when it returns true [none].
	Skip func(c *celeris.Context) bool
}

// DefaultContextKey is Config.ContextKey's default.
const DefaultContextKey = "apikey"

// maxKey bounds the length of a key looked at; longer ones are refused unread.
const maxKey = 4096

type entry struct {
	digest [sha256.Size]byte
	name   string
}

// New returns the middleware. It panics when neither Keys nor Validator is set,
// or when Lookup is malformed.
func New(cfg Config) celeris.MiddlewareFunc {
	if cfg.Keys == nil && cfg.Validator == nil {
		panic("keyauth: Config needs Keys or Validator")
	}
	if cfg.Realm == "" {
		cfg.Realm = "Restricted"
	}
	if cfg.ContextKey == "" {
		cfg.ContextKey = DefaultContextKey
	}
	if cfg.Lookup == "" {
		cfg.Lookup = "header:X-API-Key"
	}
	extract, scheme := extractor(cfg.Lookup)
	where, name, _ := strings.Cut(cfg.Lookup, ":")
	validate := cfg.Validator
	if validate == nil {
		entries := make([]entry, 0, len(cfg.Keys))
		for k, name := range cfg.Keys {
			entries = append(entries, entry{digest: sha256.Sum256([]byte(k)), name: name})
		}
		validate = func(_ *celeris.Context, key string) (string, bool, error) {
			d := sha256.Sum256([]byte(key))
			found := -1
			for i := range entries {
				if subtle.ConstantTimeCompare(d[:], entries[i].digest[:]) == 1 {
					found = i
				}
			}
			if found < 0 {
				return "", false, nil
			}
			return entries[found].name, true, nil
		}
	}
	missing := celeris.NewHTTPError(http.StatusUnauthorized, "missing API key")
	invalid := celeris.NewHTTPError(http.StatusUnauthorized, "invalid API key")
	// RFC 9110 §11.6.1: a 401 carries at least one challenge.
	challengeMissing := "ApiKey realm=" + quote(cfg.Realm) + ", in=" + quote(where) + ", name=" + quote(name)
	challengeInvalid := challengeMissing
	if scheme != "" {
		// RFC 6750 §3: no error code when the request carried no credentials.
		challengeMissing = scheme + " realm=" + quote(cfg.Realm)
		challengeInvalid = challengeMissing + `, error="invalid_token"`
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if cfg.Skip != nil && cfg.Skip(c) {
				return next(c)
			}
			key := extract(c)
			if key == "" || len(key) > maxKey {
				c.SetHeader("WWW-Authenticate", challengeMissing)
				return missing
			}
			name, ok, err := validate(c, key)
			if err != nil {
				return err
			}
			if !ok {
				c.SetHeader("WWW-Authenticate", challengeInvalid)
				return invalid
			}
			if cfg.ContextKey != "-" {
				c.Set(cfg.ContextKey, name)
			}
			return next(c)
		}
	}
}

// extractor returns the function reading the key from where lookup says, and
// the Authorization scheme for "auth:" lookups ("" otherwise).
func extractor(lookup string) (func(c *celeris.Context) string, string) {
	where, name, ok := strings.Cut(lookup, ":")
	if !ok || name == "" {
		panic("keyauth: malformed Lookup " + lookup)
	}
	switch where {
	case "header":
		return func(c *celeris.Context) string { return c.Header(name) }, ""
	case "auth":
		return func(c *celeris.Context) string { return AuthToken(c.Header("Authorization"), name) }, name
	case "query":
		return func(c *celeris.Context) string { return c.Query(name) }, ""
	case "cookie":
		return func(c *celeris.Context) string { v, _ := c.Cookie(name); return v }, ""
	}
	panic("keyauth: Lookup source must be header, auth, query or cookie: " + lookup)
}

// AuthToken returns the credentials of an Authorization header value of the given
// scheme ("" for another scheme or none). RFC 9110 §11.1: the scheme name is
// case-insensitive; one or more spaces separate it from the credentials. The
// result is a substring of header and has its lifetime.
func AuthToken(header, scheme string) string {
	if len(header) <= len(scheme) || header[len(scheme)] != ' ' || !strings.EqualFold(header[:len(scheme)], scheme) {
		return ""
	}
	return strings.Trim(header[len(scheme):], " ")
}

// Name returns the name of the accepted key stored under DefaultContextKey, ""
// when there is none.
func Name(c *celeris.Context) string {
	v, _ := c.Get(DefaultContextKey)
	s, _ := v.(string)
	return s
}

// quote makes a quoted-string (RFC 9110 §5.6.4), escaping '"' and '\'.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
