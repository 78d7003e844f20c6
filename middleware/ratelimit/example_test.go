package ratelimit_test

import (
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/basicauth"
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

// Limit logged-in users by name and everyone else by client IP, behind a load
// balancer at 10.0.0.0/8, with the IETF RateLimit and RateLimit-Policy fields.
func Example_byUser() {
	s := celeris.New(celeris.Config{Addr: ":8080", TrustedProxies: celeris.MustParsePrefixes("10.0.0.0/8")})
	s.Use(basicauth.New(basicauth.Config{Users: map[string]string{"alice": "s3cret"}}))
	s.Use(ratelimit.New(ratelimit.Config{
		Rate:             2,
		Burst:            20,
		KeyFunc:          ratelimit.FirstOf(ratelimit.ByContextValue("user"), ratelimit.ByClientIP),
		RateLimitHeaders: true,
	}))
	s.GET("/", func(c *celeris.Context) error { return c.String(200, "hello") })
	log.Fatal(s.Start())
}
