package basicauth

import (
	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/auth"
)

// principalKey stores the user for Authenticator when Config.ContextKey is "-".
const principalKey = "basicauth.principal"

// Authenticator returns an auth.Authenticator (for auth.Any) that checks Basic
// credentials as New(cfg) does, with its challenge. Its Principal has Kind
// auth.KindBasic, ID the user and the scopes scopes gives that user (none when
// scopes is nil).
func Authenticator(cfg Config, scopes func(user string) []string) auth.Authenticator {
	switch cfg.ContextKey {
	case "-":
		cfg.ContextKey = principalKey
	case "":
		cfg.ContextKey = DefaultContextKey
	}
	return auth.Wrap(auth.KindBasic, New(cfg),
		func(c *celeris.Context) bool { _, _, ok := Parse(c.Header("Authorization")); return ok },
		func(c *celeris.Context) string { v, _ := c.Get(cfg.ContextKey); s, _ := v.(string); return s },
		scopes)
}
