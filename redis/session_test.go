package celerisredis_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/middleware/session"
	celerisredis "github.com/celeris-dev/celeris/redis"
)

// Sign out everywhere against a real Redis: a user signed in on three clients
// through two server instances, one request ends all three sessions (their
// keys and the index are gone) and leaves another user's; a save of an ended
// session does not bring it back; flash messages travel through Redis.
func TestSessionDeleteUser(t *testing.T) {
	rdb := startRedis(t)
	ctx := context.Background()
	store := celerisredis.NewSessionStore(rdb, "test:sess:")
	register := func(s *celeris.Server) {
		s.Use(session.New(session.Config{Store: store, Rolling: true, MaxAge: time.Hour}))
		s.POST("/login", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			sess.Regenerate()
			sess.SetUser(c.Query("user"))
			sess.AddFlash("info", "welcome")
			return c.NoContent(204)
		})
		s.GET("/me", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			msg := ""
			for _, f := range sess.Flashes() {
				msg += " " + f.Message
			}
			return c.String(200, sess.User()+msg)
		})
		s.POST("/signout-everywhere", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			if err := session.DeleteUser(c.Context(), store, sess.User()); err != nil {
				return err
			}
			sess.Destroy()
			return c.NoContent(204)
		})
	}
	_, a := celeristest.Serve(t, quiet(), register)
	_, b := celeristest.Serve(t, quiet(), register)
	client := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		return &http.Client{Jar: jar, Timeout: 10 * time.Second}
	}
	var alice [3]*http.Client
	for i := range alice {
		alice[i] = client()
		do(t, alice[i], "POST", "http://"+[]string{a, b}[i%2]+"/login?user=alice")
		if _, body := do(t, alice[i], "GET", "http://"+b+"/me"); body != "alice welcome" {
			t.Fatalf("client %d: %q", i, body)
		}
	}
	bob := client()
	do(t, bob, "POST", "http://"+a+"/login?user=bob")
	if n := rdb.SCard(ctx, "test:sess:user:alice").Val(); n != 3 {
		t.Fatalf("index holds %d sessions, want 3", n)
	}
	if ttl := rdb.PTTL(ctx, "test:sess:user:alice").Val(); ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("index TTL %v", ttl)
	}
	if resp, _ := do(t, alice[1], "POST", "http://"+b+"/signout-everywhere"); resp.StatusCode != 204 {
		t.Fatalf("sign out: %d", resp.StatusCode)
	}
	for i, cl := range alice {
		if _, body := do(t, cl, "GET", "http://"+a+"/me"); body != "" {
			t.Errorf("client %d after sign-out everywhere: %q", i, body)
		}
	}
	if _, body := do(t, bob, "GET", "http://"+b+"/me"); body != "bob welcome" {
		t.Errorf("bob: %q", body)
	}
	keys := rdb.Keys(ctx, "test:sess:*").Val()
	if len(keys) != 2 { // bob's session and his index
		t.Errorf("keys left: %q", keys)
	}
	// An ended session is not brought back by a request still in flight.
	if err := store.SaveUser(ctx, "carol", "id-carol", []byte("x"), time.Hour, false); err != nil {
		t.Fatal(err)
	}
	if err := store.DeleteUser(ctx, "carol"); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveUser(ctx, "carol", "id-carol", []byte("x"), time.Hour, true); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("save after DeleteUser: %v", err)
	}
	if n := rdb.Exists(ctx, "test:sess:id-carol").Val(); n != 0 {
		t.Error("the ended session came back")
	}
}

// The TTL Redis keeps a session for follows its lifetime: MaxAge, a session's
// own SetMaxAge ("remember me"), capped by IdleTimeout.
func TestSessionLifetimeTTL(t *testing.T) {
	rdb := startRedis(t)
	ctx := context.Background()
	store := celerisredis.NewSessionStore(rdb, "test:ttl:")
	for _, tt := range []struct {
		name     string
		cfg      session.Config
		remember bool
		min, max time.Duration
	}{
		{name: "MaxAge", cfg: session.Config{MaxAge: 2 * time.Hour}, min: 119 * time.Minute, max: 2 * time.Hour},
		{name: "remember me", cfg: session.Config{MaxAge: 2 * time.Hour}, remember: true, min: 30*24*time.Hour - time.Minute, max: 30 * 24 * time.Hour},
		{name: "idle timeout", cfg: session.Config{MaxAge: 2 * time.Hour, IdleTimeout: 15 * time.Minute}, remember: true,
			min: 14 * time.Minute, max: 15 * time.Minute},
	} {
		cfg := tt.cfg
		cfg.Store = store
		_, addr := celeristest.Serve(t, quiet(), func(s *celeris.Server) {
			s.Use(session.New(cfg))
			s.POST("/login", func(c *celeris.Context) error {
				sess, err := session.Get(c)
				if err != nil {
					return err
				}
				sess.SetUser("dana")
				if tt.remember {
					sess.SetMaxAge(30 * 24 * time.Hour)
				}
				return c.NoContent(204)
			})
		})
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
		resp, _ := do(t, client, "POST", "http://"+addr+"/login")
		cks := resp.Cookies()
		if resp.StatusCode != 204 || len(cks) != 1 {
			t.Fatalf("%s: %d %v", tt.name, resp.StatusCode, cks)
		}
		if ttl := rdb.PTTL(ctx, "test:ttl:"+cks[0].Value).Val(); ttl < tt.min || ttl > tt.max {
			t.Errorf("%s: TTL %v, want %v to %v", tt.name, ttl, tt.min, tt.max)
		}
	}
}
