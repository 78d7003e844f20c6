package metrics_test

import (
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/metrics"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	m := metrics.New(metrics.Config{
		Skip: func(c *celeris.Context) bool { return c.Path() == "/metrics" },
	})
	s.Use(m.Middleware())
	s.GET("/metrics", m.Handler(s))
	s.GET("/", func(c *celeris.Context) error { return c.String(200, "hello") })
	log.Fatal(s.Start())
}
