package etag_test

import (
	"fmt"
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/etag"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(etag.Default())
	s.GET("/catalog", func(c *celeris.Context) error {
		c.SetHeader("Cache-Control", "no-cache") // revalidate each time: 304 when unchanged
		return c.JSON(200, []string{"apples", "pears"})
	})
	log.Fatal(s.Start())
}

func ExampleCompute() {
	fmt.Println(etag.Compute([]byte("hello"), false))
	fmt.Println(etag.Compute([]byte("hello"), true))
	// Output:
	// "5-9a71bb4c"
	// W/"5-9a71bb4c"
}
