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
	if cfg.ContextKey == "-" {
		cfg.ContextKey = principalKey
	}
	cfg.Skip = nil
	extract, _ := extractor(cfg.Lookup)
	check := auth.Check(New(cfg))
	key := cfg.ContextKey
	if key == "" {
		key = DefaultContextKey
	}
	return auth.Authenticator{Kind: auth.KindAPIKey, Authenticate: func(c *celeris.Context) (*auth.Principal, error) {
		present := extract(c) != ""
		ok, err := check(c) // without a key: sets the challenge, if any
		if !present {
			return nil, nil
		}
		if !ok {
			return nil, err
		}
		v, _ := c.Get(key)
		name, _ := v.(string)
		p := &auth.Principal{ID: name, Kind: auth.KindAPIKey}
		if scopes != nil {
			p.Scopes = scopes(name)
		}
		return p, nil
	}}
}
