package bodylimit_test

import (
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/bodylimit"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080", MaxRequestBodySize: 32 << 20})
	// JSON endpoints take at most 64 KiB; the upload route keeps the server's 32 MiB.
	api := s.Group("/api", bodylimit.New(bodylimit.Config{Limit: 64 << 10}))
	api.POST("/items", func(c *celeris.Context) error {
		var item struct{ Name string }
		if err := c.BindJSON(&item); err != nil {
			return err
		}
		return c.JSON(201, item)
	})
	s.POST("/upload", func(c *celeris.Context) error {
		b, err := c.Body()
		if err != nil {
			return err
		}
		return c.JSON(200, map[string]int{"bytes": len(b)})
	})
	log.Fatal(s.Start())
}
