package basicauth_test

import (
	"crypto/subtle"
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/basicauth"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	admin := s.Group("/admin", basicauth.New(basicauth.Config{
		Users: map[string]string{"admin": "correct horse battery staple"},
		Realm: "Admin area",
	}))
	admin.GET("/", func(c *celeris.Context) error {
		return c.String(200, "welcome, "+basicauth.User(c))
	})
	log.Fatal(s.Start())
}

func Example_validator() {
	token := []byte("from a secret store")
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(basicauth.New(basicauth.Config{
		Validator: func(user, password string, c *celeris.Context) (bool, error) {
			return user == "deploy" && subtle.ConstantTimeCompare([]byte(password), token) == 1, nil
		},
	}))
	s.POST("/deploy", func(c *celeris.Context) error { return c.NoContent(202) })
	log.Fatal(s.Start())
}
