package keyauth

import (
	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/auth"
)

// principalKey stores the key's name for Authenticator when Config.ContextKey
// is "-".
const principalKey = "keyauth.principal"

// Authenticator returns an auth.Authenticator (for auth.Any) that checks API
// keys as New(cfg) does, with its answers and challenge. Its Principal has
// Kind auth.KindAPIKey, ID the key's name and the scopes scopes gives that name
// (none when scopes is nil). cfg.Skip is ignored.
func Authenticator(cfg Config, scopes func(name string) []string) auth.Authenticator {
	if cfg.Lookup == "" {
		cfg.Lookup = "header:X-API-Key"
	}
	switch cfg.ContextKey {
	case "-":
		cfg.ContextKey = principalKey
	case "":
		cfg.ContextKey = DefaultContextKey
	}
	cfg.Skip = nil
	extract, _ := extractor(cfg.Lookup)
	return auth.Wrap(auth.KindAPIKey, New(cfg),
		func(c *celeris.Context) bool { return extract(c) != "" },
		func(c *celeris.Context) string { v, _ := c.Get(cfg.ContextKey); s, _ := v.(string); return s },
		scopes)
}
