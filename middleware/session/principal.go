package session

import (
	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/auth"
)

// Authenticator returns an auth.Authenticator (for auth.Any) that accepts a
// request whose session has a user (SetUser): its Principal has Kind
// auth.KindSession, ID the user and the scopes SetUser recorded. A session
// without user is no credential (a session has no WWW-Authenticate scheme). The
// session middleware must run before auth.Any; a Store failure is a 503.
func Authenticator() auth.Authenticator {
	return auth.Authenticator{Kind: auth.KindSession, Authenticate: func(c *celeris.Context) (*auth.Principal, error) {
		s, err := Get(c)
		if err != nil {
			return nil, err
		}
		if s.user == "" {
			return nil, nil
		}
		return &auth.Principal{ID: s.user, Kind: auth.KindSession, Scopes: s.scopes}, nil
	}}
}
