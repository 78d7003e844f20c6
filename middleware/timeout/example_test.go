package timeout_test

import (
	"database/sql"
	"log"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/timeout"
)

func Example() {
	var db *sql.DB // opened elsewhere
	s := celeris.New(celeris.Config{Addr: ":8080"})
	api := s.Group("/api", timeout.New(timeout.Config{Timeout: 2 * time.Second}))
	api.GET("/report", func(c *celeris.Context) error {
		// Pass the request's context on, so that the query stops at the deadline
		// and the client gets the 503 on time.
		var n int
		if err := db.QueryRowContext(c.Context(), "SELECT count(*) FROM orders").Scan(&n); err != nil {
			return err
		}
		return c.JSON(200, map[string]int{"orders": n})
	})
	log.Fatal(s.Start())
}
