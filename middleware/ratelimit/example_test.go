package ratelimit_test

import (
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/ratelimit"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	// 5 requests per second per client IP, bursts of up to 20.
	s.Use(ratelimit.New(ratelimit.Config{Rate: 5, Burst: 20, Headers: true}))
	s.GET("/", func(c *celeris.Context) error { return c.String(200, "hello") })
	log.Fatal(s.Start())
}

// Limit by API key instead of client address; requests without a key pass.
func Example_keyFunc() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	api := s.Group("/api", ratelimit.New(ratelimit.Config{
		Rate:    100,
		KeyFunc: func(c *celeris.Context) string { return c.Header("X-API-Key") },
	}))
	api.GET("/items", func(c *celeris.Context) error { return c.JSON(200, []string{}) })
	log.Fatal(s.Start())
}
