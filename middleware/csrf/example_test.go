package csrf_test

import (
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/csrf"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(csrf.New(csrf.Config{
		TrustedOrigins: []string{"https://admin.example.com"},
		Token:          true, // clients without Sec-Fetch-Site and Origin must send the token
	}))
	s.GET("/profile", func(c *celeris.Context) error {
		return c.HTML(200, `<form method="post"><input type="hidden" name="csrf_token" value="`+csrf.Token(c)+`">...</form>`)
	})
	s.POST("/profile", func(c *celeris.Context) error { return c.String(200, "saved") })
	log.Fatal(s.Start())
}
