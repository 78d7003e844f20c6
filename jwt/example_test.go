package jwt_test

import (
	"context"
	"log"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/jwt"
	"github.com/celeris-dev/celeris/middleware/ratelimit"
)

// Tokens from an identity provider, verified with its published key set; limits
// per user.
func Example() {
	keys, err := jwt.NewKeySet(context.Background(), jwt.KeySetConfig{
		URL: "https://id.example.com/.well-known/jwks.json",
	})
	if err != nil {
		log.Fatal(err)
	}
	s := celeris.New(celeris.Config{Addr: ":8080"})
	api := s.Group("/api",
		jwt.New(jwt.Config{KeySet: keys, Issuer: "https://id.example.com/", Audience: "orders-api", RequireExpiry: true, Leeway: 30 * time.Second}),
		ratelimit.New(ratelimit.Config{Rate: 10, KeyFunc: ratelimit.ByContextValue(jwt.SubjectKey)}))
	api.GET("/orders", func(c *celeris.Context) error {
		claims := jwt.GetClaims(c).(jwt.MapClaims)
		return c.JSON(200, map[string]any{"user": jwt.Subject(c), "scope": claims["scope"]})
	})
	api.DELETE("/orders/:id", func(c *celeris.Context) error {
		return c.NoContent(204)
	}, jwt.RequireScopes("orders:write")) // 403 insufficient_scope without it
	log.Fatal(s.Start())
}

// A shared HMAC secret (HS256/384/512).
func Example_hmac() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(jwt.New(jwt.Config{Key: []byte("a secret of at least 32 random bytes")}))
	s.GET("/me", func(c *celeris.Context) error { return c.String(200, jwt.Subject(c)) })
	log.Fatal(s.Start())
}
