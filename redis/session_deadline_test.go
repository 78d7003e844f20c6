package celerisredis_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/middleware/session"
	"github.com/celeris-dev/celeris/middleware/timeout"
	celerisredis "github.com/celeris-dev/celeris/redis"
)

// The session store on a stalled Redis (CLIENT PAUSE): a page under a 1 s
// timeout middleware answers 503 within the second, and a Load without a
// deadline returns ErrTimeout after DefaultTimeout, with and without
// ContextTimeoutEnabled.
func TestSessionStoreStalledRedis(t *testing.T) {
	admin := startRedis(t)
	var cases []stallCase
	for _, cte := range []bool{false, true} {
		store := celerisredis.NewSessionStore(warmClient(t, admin, cte), "stall:")
		_, addr := celeristest.Serve(t, quiet(), func(s *celeris.Server) {
			s.GET("/", func(c *celeris.Context) error {
				sess, err := session.Get(c)
				if err != nil {
					return err
				}
				sess.Set("n", 1)
				return c.String(200, "ok")
			}, timeout.New(timeout.Config{Timeout: time.Second}), session.New(session.Config{Store: store, Logger: discard}))
		})
		cases = append(cases, stallCase{name: fmt.Sprintf("ContextTimeoutEnabled=%v page", cte), run: func() error {
			// A cookie naming a session makes the middleware load it.
			req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
			req.AddCookie(&http.Cookie{Name: "session", Value: strings.Repeat("A", 43)})
			return want503(req)
		}}, stallCase{name: fmt.Sprintf("ContextTimeoutEnabled=%v Load", cte), run: func() error {
			if _, err := store.Load(context.Background(), "someone"); !errors.Is(err, celerisredis.ErrTimeout) {
				return fmt.Errorf("Load: %v, want ErrTimeout", err)
			}
			return nil
		}})
	}
	runStalled(t, admin, cases)
}
