package celerisredis_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/middleware/ratelimit"
	"github.com/celeris-dev/celeris/middleware/session"
	celerisredis "github.com/celeris-dev/celeris/redis"
	goredis "github.com/redis/go-redis/v9"
)

// startRedis starts a redis-server of its own on a free 127.0.0.1 port, without
// persistence, and stops it when the test ends. It skips the test when
// redis-server is not installed.
func startRedis(t testing.TB) *goredis.Client {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found in PATH (apt-get install redis-server): skipping the tests against a real Redis")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--protected-mode", "yes")
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	client := goredis.NewClient(&goredis.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), MaxRetries: -1})
	t.Cleanup(func() { client.Close() })
	deadline := time.Now().Add(10 * time.Second)
	for client.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatal("redis-server did not answer PING within 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	return client
}

var discard = slog.New(slog.DiscardHandler)

func quiet() celeris.Config { return celeris.Config{Logger: discard} }

func do(t *testing.T, client *http.Client, method, url string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// Sessions in Redis, over a real socket with a cookie jar: values survive
// across requests and across two server instances sharing the store; login
// regenerates the ID and deletes the old one from Redis; the TTL is MaxAge;
// logout deletes the key.
func TestSessionStore(t *testing.T) {
	rdb := startRedis(t)
	store := celerisredis.NewSessionStore(rdb, "test:sess:")
	ctx := context.Background()
	register := func(s *celeris.Server) {
		s.Use(session.New(session.Config{Store: store, MaxAge: 10 * time.Minute}))
		s.POST("/inc", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			n, _ := sess.Get("n").(int)
			sess.Set("n", n+1)
			return nil
		})
		s.POST("/login", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			sess.Regenerate()
			sess.Set("user", "alice")
			return nil
		})
		s.GET("/show", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			return c.String(200, fmt.Sprintf("%v %s", sess.Get("n"), sess.GetString("user")))
		})
		s.POST("/logout", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			sess.Destroy()
			return nil
		})
	}
	_, a := celeristest.Serve(t, quiet(), register)
	_, b := celeristest.Serve(t, quiet(), register)
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Jar: jar, Transport: tr, Timeout: 10 * time.Second}
	// The jar keys cookies by host (not port): both instances see the cookie.
	sid := func() string {
		u, _ := url.Parse("http://" + a)
		for _, ck := range jar.Cookies(u) {
			if ck.Name == "session" {
				return ck.Value
			}
		}
		return ""
	}
	do(t, client, "POST", "http://"+a+"/inc")
	do(t, client, "POST", "http://"+b+"/inc")
	if _, body := do(t, client, "GET", "http://"+a+"/show"); body != "2 " {
		t.Fatalf("show: %q", body)
	}
	before := sid()
	if ttl := rdb.PTTL(ctx, "test:sess:"+before).Val(); ttl < 9*time.Minute || ttl > 10*time.Minute {
		t.Errorf("TTL %v, want about 10m", ttl)
	}
	do(t, client, "POST", "http://"+b+"/login")
	after := sid()
	if after == before || after == "" {
		t.Fatalf("login kept the ID %q", after)
	}
	if n := rdb.Exists(ctx, "test:sess:"+before).Val(); n != 0 {
		t.Error("the pre-login ID is still in Redis")
	}
	if _, body := do(t, client, "GET", "http://"+a+"/show"); body != "2 alice" {
		t.Errorf("after login: %q", body)
	}
	do(t, client, "POST", "http://"+a+"/logout")
	if n := rdb.Exists(ctx, "test:sess:"+after).Val(); n != 0 || sid() != "" {
		t.Errorf("logout left the session: exists %d, cookie %q", n, sid())
	}
	// Redis down: the save fails, the answer is a 503 (a dependency is down),
	// and no session is created.
	_ = rdb.Do(ctx, "SHUTDOWN", "NOSAVE").Err()
	jar2, _ := cookiejar.New(nil)
	client.Jar = jar2
	do(t, client, "POST", "http://"+a+"/inc")
	if resp, _ := do(t, client, "POST", "http://"+a+"/inc"); resp.StatusCode != 503 {
		t.Errorf("Redis down: %d", resp.StatusCode)
	}
}

// Rate limits shared by two instances through Redis, with the RateLimit fields;
// a Redis that is down answers 503, or lets requests through with FailOpen.
func TestRateLimitStore(t *testing.T) {
	rdb := startRedis(t)
	store := celerisredis.NewRateLimitStore(rdb, "test:rl:")
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	// The servers log where the limiters do: a failure is logged once in all.
	var logs testkit.Log
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	register := func(s *celeris.Server) {
		s.GET("/", ok, ratelimit.New(ratelimit.Config{Rate: 0.01, Burst: 3, Store: store, RateLimitHeaders: true, Logger: logger}))
		s.GET("/open", ok, ratelimit.New(ratelimit.Config{Rate: 0.01, Burst: 3, Store: store, FailOpen: true, Logger: logger,
			KeyFunc: ratelimit.ByHeader("X-Key")}))
	}
	_, a := celeristest.Serve(t, celeris.Config{Logger: logger}, register)
	_, b := celeristest.Serve(t, celeris.Config{Logger: logger}, register)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for i, want := range []struct {
		addr      string
		status    int
		rateLimit string
	}{
		{addr: a, status: 200, rateLimit: `"default";r=2;t=100`},
		{addr: b, status: 200, rateLimit: `"default";r=1;t=100`},
		{addr: a, status: 200, rateLimit: `"default";r=0;t=100`},
		{addr: b, status: 429, rateLimit: `"default";r=0;t=100`},
	} {
		resp, _ := do(t, client, "GET", "http://"+want.addr+"/")
		if got := resp.Header.Get("RateLimit"); resp.StatusCode != want.status || got != want.rateLimit ||
			resp.Header.Get("RateLimit-Policy") != `"default";q=3;w=300` {
			t.Errorf("request %d: %d RateLimit %q Policy %q", i, resp.StatusCode, got, resp.Header.Get("RateLimit-Policy"))
		}
		if want.status == 429 {
			if ra := resp.Header.Get("Retry-After"); ra != "100" {
				t.Errorf("Retry-After %q", ra)
			}
		}
	}
	// The default key is the client's address as text, which redis-cli finds.
	keys := rdb.Keys(context.Background(), "test:rl:*").Val()
	if len(keys) != 1 || keys[0] != "test:rl:ip:127.0.0.1" {
		t.Fatalf("keys %q, want [test:rl:ip:127.0.0.1]", keys)
	}
	if ttl := rdb.PTTL(context.Background(), keys[0]).Val(); ttl < 299*time.Second || ttl > 301*time.Second {
		t.Errorf("bucket TTL %v, want the 300 s to refill", ttl)
	}
	_ = rdb.Do(context.Background(), "SHUTDOWN", "NOSAVE").Err()
	if resp, _ := do(t, client, "GET", "http://"+a+"/"); resp.StatusCode != 503 {
		t.Errorf("Redis down: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", "http://"+a+"/open", nil)
	req.Header.Set("X-Key", "k")
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("Redis down, FailOpen: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if n := strings.Count(logs.String(), "\n"); n != 2 || strings.Count(logs.String(), "ratelimit: store failed") != 2 {
		t.Errorf("two failed requests, %d log records, want 2: %s", n, logs.String())
	}
}

// Concurrent takes of one bucket from many goroutines: exactly the burst is
// allowed (the script is atomic), and tokens refill on Redis's clock.
func TestRateLimitAtomic(t *testing.T) {
	rdb := startRedis(t)
	store := celerisredis.NewRateLimitStore(rdb, "")
	ctx := context.Background()
	var allowed atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				r, err := store.Take(ctx, "shared", ratelimit.Limit{Rate: 0.001, Burst: 40})
				if err != nil {
					t.Error(err)
					return
				}
				if r.Allowed {
					allowed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := allowed.Load(); n != 40 {
		t.Fatalf("allowed %d of 200, want the burst of 40", n)
	}
	// 20 tokens a second: after 150 ms about 3 are back.
	l := ratelimit.Limit{Rate: 20, Burst: 2}
	for range 2 {
		store.Take(ctx, "fast", l)
	}
	if r, _ := store.Take(ctx, "fast", l); r.Allowed || r.RetryAfter <= 0 || r.RetryAfter > 50*time.Millisecond {
		t.Fatalf("drained: %+v", r)
	}
	time.Sleep(150 * time.Millisecond)
	if r, _ := store.Take(ctx, "fast", l); !r.Allowed {
		t.Fatalf("after refill: %+v", r)
	}
	if n := rdb.Exists(ctx, "ratelimit:shared").Val(); n != 1 {
		t.Errorf("default prefix: key missing")
	}
}

// BenchmarkRateLimitTake: one EVALSHA round trip to a local redis-server.
func BenchmarkRateLimitTake(b *testing.B) {
	store := celerisredis.NewRateLimitStore(startRedis(b), "")
	ctx := context.Background()
	l := ratelimit.Limit{Rate: 1e6, Burst: 1e6}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := store.Take(ctx, "bench", l); err != nil {
			b.Fatal(err)
		}
	}
}
