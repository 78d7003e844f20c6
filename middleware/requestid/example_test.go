package requestid_test

import (
	"fmt"
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/requestid"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(requestid.Default())
	s.GET("/", func(c *celeris.Context) error {
		return c.String(200, "request "+requestid.Get(c))
	})
	log.Fatal(s.Start())
}

func ExampleValid() {
	fmt.Println(requestid.Valid("550e8400-e29b-41d4-a716-446655440000"))
	fmt.Println(requestid.Valid("two words"))
	// Output:
	// true
	// false
}
