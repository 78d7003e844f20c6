package logger_test

import (
	"log"
	"log/slog"
	"os"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/logger"
	"github.com/celeris-dev/celeris/middleware/requestid"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(requestid.Default(), logger.New(logger.Config{
		Logger: slog.New(slog.NewJSONHandler(os.Stdout, nil)),
		Skip:   func(c *celeris.Context) bool { return c.Path() == "/healthz" },
	}))
	s.GET("/healthz", func(c *celeris.Context) error { return c.NoContent(204) })
	s.GET("/", func(c *celeris.Context) error { return c.String(200, "hello") })
	// Each request logs e.g.
	// {"time":"...","level":"INFO","msg":"request","method":"GET","path":"/","status":200,"latency":31000,"request_id":"3f9a0c7e12d4b8a1-1"}
	log.Fatal(s.Start())
}
