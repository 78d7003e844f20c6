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
	goredis "github.com/redis/go-redis/v9"
)

// The session store on a stalled Redis (CLIENT PAUSE): a page under a 1 s
// timeout middleware answers 503 within the second, and a Load without a
// deadline returns ErrTimeout after DefaultTimeout, with and without
// ContextTimeoutEnabled.
func TestSessionStoreStalledRedis(t *testing.T) {
	admin := startRedis(t)
	type result struct {
		name    string
		elapsed time.Duration
		err     error
	}
	var cases []func() result
	for _, cte := range []bool{false, true} {
		client := goredis.NewClient(&goredis.Options{Addr: admin.Options().Addr, ContextTimeoutEnabled: cte})
		t.Cleanup(func() { client.Close() })
		if err := client.Ping(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		store := celerisredis.NewSessionStore(client, "stall:")
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
		cases = append(cases, func() result {
			// A cookie naming a session makes the middleware load it.
			req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
			req.AddCookie(&http.Cookie{Name: "session", Value: strings.Repeat("A", 43)})
			start := time.Now()
			resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
			r := result{name: fmt.Sprintf("ContextTimeoutEnabled=%v page", cte), err: err}
			r.elapsed = time.Since(start)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode != http.StatusServiceUnavailable {
					r.err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			return r
		}, func() result {
			start := time.Now()
			_, err := store.Load(context.Background(), "someone")
			r := result{name: fmt.Sprintf("ContextTimeoutEnabled=%v Load", cte), elapsed: time.Since(start)}
			if !errors.Is(err, celerisredis.ErrTimeout) {
				r.err = fmt.Errorf("Load: %v, want ErrTimeout", err)
			}
			return r
		})
	}
	if err := admin.Do(context.Background(), "CLIENT", "PAUSE", "4000", "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	results := make(chan result, len(cases))
	for _, c := range cases {
		go func() { results <- c() }()
	}
	for range cases {
		r := <-results
		if r.err != nil || r.elapsed < 900*time.Millisecond || r.elapsed > 1200*time.Millisecond {
			t.Errorf("%s: %v after %v, want an answer after 1 s", r.name, r.err, r.elapsed.Round(time.Millisecond))
		} else {
			t.Logf("%s: after %v", r.name, r.elapsed.Round(time.Millisecond))
		}
	}
}
