package static_test

import (
	"embed"
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/static"
)

// In a real program: //go:embed public
var public embed.FS

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.GET("/static/*filepath", static.New(static.Config{
		FS:           public,
		Root:         "public",
		CacheControl: "public, max-age=86400",
	}))
	log.Fatal(s.Start())
}
