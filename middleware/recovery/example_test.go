package recovery_test

import (
	"log"
	"net/http"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/recovery"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(recovery.New(recovery.Config{
		Handler: func(c *celeris.Context, panicValue any) error {
			return celeris.NewHTTPError(http.StatusInternalServerError, "sorry, something broke")
		},
	}))
	s.GET("/", func(c *celeris.Context) error {
		var m map[string]int
		m["boom"]++ // panics: assignment to entry in nil map
		return nil
	})
	log.Fatal(s.Start())
}
