package compress_test

import (
	"compress/gzip"
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/compress"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(compress.New(compress.Config{
		Level:     gzip.BestSpeed,
		MinLength: 512,
	}))
	s.GET("/", func(c *celeris.Context) error {
		return c.HTML(200, "<!doctype html><title>big page</title>...")
	})
	log.Fatal(s.Start())
}

// To gzip every response a client accepts, however small (the default skips bodies
// under 256 bytes), set a negative MinLength.
func Example_everything() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(compress.New(compress.Config{MinLength: -1}))
	s.GET("/json", func(c *celeris.Context) error {
		return c.JSON(200, map[string]string{"message": "Hello, World!"})
	})
	log.Fatal(s.Start())
}
