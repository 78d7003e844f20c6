package keyauth_test

import (
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/keyauth"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	api := s.Group("/api", keyauth.New(keyauth.Config{
		Keys:   map[string]string{"7f3c9e2a-from-a-secret-store": "billing-service"},
		Lookup: "auth:Bearer", // Authorization: Bearer <key>
	}))
	api.GET("/invoices", func(c *celeris.Context) error {
		return c.String(200, "invoices for "+keyauth.Name(c))
	})
	log.Fatal(s.Start())
}
