package jwt

import (
	"net/http"
	"slices"
	"strings"

	"github.com/celeris-dev/celeris"
)

// RequireScopes returns middleware, to run after New, that lets a request through
// only when its token grants every scope given. Scopes come from the "scope" claim
// (a space-separated string, RFC 8693 §4.2) or, without it, from "scp" (a string
// or an array of strings, as some identity providers issue). A request lacking one
// gets 403 Forbidden with (RFC 6750 §3.1)
//
//	WWW-Authenticate: Bearer error="insufficient_scope", scope="<scopes>"
//
// and one without verified claims (New did not run or skipped it) gets 401. It
// panics when a scope is empty or holds a space, '"' or '\' (RFC 6750 §3: scope
// tokens are printable ASCII without them).
func RequireScopes(scopes ...string) celeris.MiddlewareFunc {
	for _, s := range scopes {
		if s == "" || strings.ContainsAny(s, " \"\\") || strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
			panic("jwt: RequireScopes: malformed scope " + s)
		}
	}
	challenge := `Bearer error="insufficient_scope", scope="` + strings.Join(scopes, " ") + `"`
	forbidden := celeris.NewHTTPError(http.StatusForbidden, "insufficient scope")
	unauthorized := celeris.NewHTTPError(http.StatusUnauthorized, "missing bearer token")
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			claims := GetClaims(c)
			if claims == nil {
				c.SetHeader("WWW-Authenticate", "Bearer")
				return unauthorized
			}
			granted := Scopes(claims)
			for _, s := range scopes {
				if !slices.Contains(granted, s) {
					c.SetHeader("WWW-Authenticate", challenge)
					return forbidden
				}
			}
			return next(c)
		}
	}
}

// Scopes returns the scopes claims grant: the "scope" claim split at spaces, or
// the "scp" claim (a string split the same way, or an array of strings), for
// MapClaims; a claims type of its own grants what its ScopeClaims method says,
// and none without one.
func Scopes(claims Claims) []string {
	switch cl := claims.(type) {
	case MapClaims:
		if s, ok := cl["scope"].(string); ok {
			return strings.Fields(s)
		}
		switch v := cl["scp"].(type) {
		case string:
			return strings.Fields(v)
		case []any:
			out := make([]string, 0, len(v))
			for _, e := range v {
				if s, ok := e.(string); ok {
					out = append(out, s)
				}
			}
			return out
		}
	case ScopeClaims:
		return cl.Scopes()
	}
	return nil
}

// ScopeClaims is implemented by a claims type (Config.NewClaims) that carries
// scopes, for RequireScopes.
type ScopeClaims interface {
	Scopes() []string
}
