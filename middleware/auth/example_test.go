package auth_test

import (
	"errors"
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/auth"
	"github.com/celeris-dev/celeris/middleware/keyauth"
	"github.com/celeris-dev/celeris/middleware/session"
)

// A signed-in browser session or an API key, one principal either way (add
// jwt.Authenticator from the jwt module for tokens).
func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	store := session.NewMemoryStore()
	keyScopes := map[string][]string{"billing-service": {"invoices:read"}}
	api := s.Group("/api", session.New(session.Config{Store: store}), auth.Any(
		session.Authenticator(),
		keyauth.Authenticator(keyauth.Config{Keys: map[string]string{"7f3c9e2a-from-a-secret-store": "billing-service"}},
			func(name string) []string { return keyScopes[name] }),
	))
	api.GET("/invoices", func(c *celeris.Context) error {
		p := auth.From(c)
		return c.String(200, "invoices for "+p.Kind+" "+p.ID)
	}, auth.RequireScopes("invoices:read"))
	api.DELETE("/invoices/:id", func(c *celeris.Context) error {
		return c.NoContent(204)
	}, auth.Require(func(_ *celeris.Context, p *auth.Principal) error {
		if p.Kind != auth.KindSession || !p.HasScope("admin") {
			return errors.New("admins only, signed in") // 403
		}
		return nil
	}))
	log.Fatal(s.Start())
}
