package cors_test

import (
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/cors"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	// Server middleware (s.Use), so that preflights reach it even for routes
	// without an OPTIONS handler.
	s.Use(cors.New(cors.Config{
		AllowOrigins:     []string{"https://app.example.com", "https://*.example.org"},
		AllowHeaders:     []string{"Content-Type", "Authorization"},
		ExposeHeaders:    []string{"X-Total-Count"},
		AllowCredentials: true,
		MaxAge:           3600,
	}))
	s.GET("/api/items", func(c *celeris.Context) error { return c.JSON(200, []string{"a", "b"}) })
	log.Fatal(s.Start())
}
