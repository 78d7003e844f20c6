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
	if cfg.ContextKey == "-" {
		cfg.ContextKey = principalKey
	}
	check := auth.Check(New(cfg))
	key := cfg.ContextKey
	if key == "" {
		key = DefaultContextKey
	}
	return auth.Authenticator{Kind: auth.KindBasic, Authenticate: func(c *celeris.Context) (*auth.Principal, error) {
		_, _, present := Parse(c.Header("Authorization"))
		ok, err := check(c) // without credentials: sets the challenge
		if !present {
			return nil, nil
		}
		if !ok {
			return nil, err
		}
		v, _ := c.Get(key)
		user, _ := v.(string)
		p := &auth.Principal{ID: user, Kind: auth.KindBasic}
		if scopes != nil {
			p.Scopes = scopes(user)
		}
		return p, nil
	}}
}
