package celerisredis_test

import (
	"log"
	"os"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/ratelimit"
	"github.com/celeris-dev/celeris/middleware/session"
	celerisredis "github.com/celeris-dev/celeris/redis"
	goredis "github.com/redis/go-redis/v9"
)

// Sessions and rate limits shared by every instance behind the load balancer.
func Example() {
	rdb := goredis.NewClient(&goredis.Options{Addr: os.Getenv("REDIS_ADDR")})
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.Use(ratelimit.New(ratelimit.Config{
		Rate:             10,
		Burst:            50,
		Store:            celerisredis.NewRateLimitStore(rdb, "rl:"),
		RateLimitHeaders: true,
	}))
	s.Use(session.New(session.Config{Store: celerisredis.NewSessionStore(rdb, "sess:")}))
	s.GET("/", func(c *celeris.Context) error {
		sess, err := session.Get(c)
		if err != nil {
			return err
		}
		return c.String(200, "hello "+sess.GetString("user"))
	})
	log.Fatal(s.Start())
}
