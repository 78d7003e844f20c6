package jwt

import (
	"net/http"
	"strings"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/auth"
)

// RequireScopes returns middleware, to run after New (or auth.Any), that lets a
// request through only when its principal holds every scope given, whatever
// the credential's kind: a token's scopes come from the "scope" claim (a
// space-separated string, RFC 8693 §4.2) or, without it, from "scp" (a string
// or an array of strings, as some identity providers issue); an API key's or a
// session's are what their auth.Authenticator gives. A request lacking one gets
// 403 Forbidden, with a token (RFC 6750 §3.1)
//
//	WWW-Authenticate: Bearer error="insufficient_scope", scope="<scopes>"
//
// and one without principal (New did not run or skipped it) gets 401. It is
// auth.RequireScopes with a Bearer challenge on that 401, and panics as it
// does on a malformed scope.
func RequireScopes(scopes ...string) celeris.MiddlewareFunc {
	check := auth.RequireScopes(scopes...)
	unauthorized := celeris.NewHTTPError(http.StatusUnauthorized, "missing bearer token")
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		inner := check(next)
		return func(c *celeris.Context) error {
			if auth.From(c) == nil {
				c.SetHeader("WWW-Authenticate", "Bearer")
				return unauthorized
			}
			return inner(c)
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
