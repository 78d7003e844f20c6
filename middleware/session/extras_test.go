package session_test

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/compress"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/session"
)

// timing registers /inc, /show and /remember (a 30-day session) behind a
// session middleware with cfg and a fake clock.
func timing(t *testing.T, cfg session.Config, clk *clock) string {
	t.Helper()
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(session.New(session.WithClock(cfg, clk.now)))
		s.POST("/inc", counter)
		s.GET("/show", show)
		s.POST("/remember", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			sess.SetMaxAge(30 * 24 * time.Hour)
			return c.String(200, "remembered")
		})
	})
	return "http://" + addr
}

// Rolling: an active user's session outlives MaxAge; a session left alone
// ends MaxAge after its last use. Without Rolling it ends MaxAge after its last
// change, however often it is read. Both for the cookie store and a Store.
func TestRolling(t *testing.T) {
	for _, kind := range []string{"cookie", "store"} {
		for _, rolling := range []bool{true, false} {
			t.Run(kind+"/rolling="+strconv.FormatBool(rolling), func(t *testing.T) {
				clk := &clock{t: time.Unix(1_800_000_000, 0)}
				cfg := session.Config{MaxAge: time.Hour, Rolling: rolling}
				if kind == "cookie" {
					cfg.Keys = [][]byte{key1}
				} else {
					st := session.NewMemoryStore()
					session.SetMemoryClock(st, clk.now)
					cfg.Store = st
				}
				base := timing(t, cfg, clk)
				client, _ := jarClient(t, mwtest.Client(t))
				mwtest.Do(t, client, "POST", base+"/inc", nil, nil)
				for range 4 { // 2 hours of activity, a request each 30 minutes
					clk.advance(30 * time.Minute)
					resp, body := mwtest.Get(t, client, base+"/show", nil)
					if rolling && (!strings.HasPrefix(body, "1 ") || !strings.Contains(resp.Header.Get("Set-Cookie"), "Max-Age=3600")) {
						t.Fatalf("active session: %q Set-Cookie %q", body, resp.Header.Get("Set-Cookie"))
					}
				}
				_, body := mwtest.Get(t, client, base+"/show", nil)
				if rolling != strings.HasPrefix(body, "1 ") {
					t.Errorf("after 2 hours of use: %q", body)
				}
				if rolling {
					clk.advance(61 * time.Minute)
					if _, body := mwtest.Get(t, client, base+"/show", nil); !strings.HasPrefix(body, "0 ") {
						t.Errorf("idle past MaxAge: %q", body)
					}
				}
			})
		}
	}
}

// IdleTimeout ends a session unused for that long, though its lifetime goes
// on; a session used more often lives on.
func TestIdleTimeout(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	st := session.NewMemoryStore()
	session.SetMemoryClock(st, clk.now)
	for _, cfg := range []session.Config{{Store: st}, {Keys: [][]byte{key1}}} {
		cfg.MaxAge, cfg.IdleTimeout = 24*time.Hour, 15*time.Minute
		base := timing(t, cfg, clk)
		mwtest.Run(t, strings.TrimPrefix(base, "http://"), func(t *testing.T, client *http.Client) {
			client, _ = jarClient(t, client)
			mwtest.Do(t, client, "POST", base+"/inc", nil, nil)
			for range 6 {
				clk.advance(10 * time.Minute)
				if _, body := mwtest.Get(t, client, base+"/show", nil); !strings.HasPrefix(body, "1 ") {
					t.Fatalf("used every 10 minutes: %q", body)
				}
			}
			clk.advance(16 * time.Minute)
			if _, body := mwtest.Get(t, client, base+"/show", nil); !strings.HasPrefix(body, "0 ") {
				t.Errorf("unused for 16 minutes: %q", body)
			}
		})
	}
}

// SetMaxAge gives one session its own lifetime ("remember me"): its cookie's
// Max-Age and expiry are 30 days while others keep MaxAge.
func TestRememberMe(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	st := session.NewMemoryStore()
	session.SetMemoryClock(st, clk.now)
	base := timing(t, session.Config{Store: st, MaxAge: time.Hour}, clk)
	mwtest.Run(t, strings.TrimPrefix(base, "http://"), func(t *testing.T, client *http.Client) {
		client, _ = jarClient(t, client)
		other, _ := jarClient(t, mwtest.Client(t))
		mwtest.Do(t, other, "POST", base+"/inc", nil, nil)
		mwtest.Do(t, client, "POST", base+"/inc", nil, nil)
		resp, _ := mwtest.Do(t, client, "POST", base+"/remember", nil, nil)
		if sc := resp.Header.Get("Set-Cookie"); !strings.Contains(sc, "Max-Age=2592000") {
			t.Errorf("remember me: Set-Cookie %q", sc)
		}
		clk.advance(48 * time.Hour)
		if _, body := mwtest.Get(t, client, base+"/show", nil); !strings.HasPrefix(body, "1 ") {
			t.Errorf("remembered session after 2 days: %q", body)
		}
		if _, body := mwtest.Get(t, other, base+"/show", nil); !strings.HasPrefix(body, "0 ") {
			t.Errorf("ordinary session after 2 days: %q", body)
		}
		// The lifetime is the session's: a later change keeps it.
		resp, _ = mwtest.Do(t, client, "POST", base+"/inc", nil, nil)
		if sc := resp.Header.Get("Set-Cookie"); !strings.Contains(sc, "Max-Age=2592000") {
			t.Errorf("after a change: Set-Cookie %q", sc)
		}
		clk.advance(-48 * time.Hour)
	})
}

// A flash message is shown once, by the page after the one that added it,
// through a redirect, with both stores.
func TestFlash(t *testing.T) {
	for _, cfg := range []session.Config{{Keys: [][]byte{key1}}, {Store: session.NewMemoryStore()}} {
		_, addr := mwtest.Start(t, func(s *celeris.Server) {
			s.Use(session.New(cfg))
			s.POST("/save", func(c *celeris.Context) error {
				sess, err := session.Get(c)
				if err != nil {
					return err
				}
				sess.AddFlash("info", "saved")
				sess.AddFlash("warning", "quota at 90%")
				return c.Redirect(303, "/page")
			})
			s.GET("/page", func(c *celeris.Context) error {
				sess, err := session.Get(c)
				if err != nil {
					return err
				}
				var b strings.Builder
				for _, f := range sess.Flashes() {
					b.WriteString(f.Kind + ":" + f.Message + ";")
				}
				return c.String(200, b.String())
			})
		})
		mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
			client, _ = jarClient(t, client)
			client.CheckRedirect = nil // follow the 303
			if _, body := mwtest.Do(t, client, "POST", "http://"+addr+"/save", nil, nil); body != "info:saved;warning:quota at 90%;" {
				t.Errorf("after the redirect: %q", body)
			}
			if _, body := mwtest.Get(t, client, "http://"+addr+"/page", nil); body != "" {
				t.Errorf("shown twice: %q", body)
			}
		})
	}
}

// DeleteUser ends every session of a user (sign out everywhere), not other
// users' sessions; a request of a signed-out session in flight cannot bring
// it back; the cookie store cannot do it.
func TestDeleteUser(t *testing.T) {
	store := session.NewMemoryStore()
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(session.New(session.Config{Store: store}))
		s.POST("/login", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			sess.Regenerate()
			sess.SetUser(c.Query("user"))
			return c.NoContent(204)
		})
		s.GET("/me", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			return c.String(200, sess.User())
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
	})
	base := "http://" + addr
	mwtest.Run(t, addr, func(t *testing.T, _ *http.Client) {
		var alice [3]*http.Client
		for i := range alice {
			alice[i], _ = jarClient(t, mwtest.H2CClient(t))
			mwtest.Do(t, alice[i], "POST", base+"/login?user=alice", nil, nil)
		}
		bob, _ := jarClient(t, mwtest.Client(t))
		mwtest.Do(t, bob, "POST", base+"/login?user=bob", nil, nil)
		for _, cl := range alice {
			if _, body := mwtest.Get(t, cl, base+"/me", nil); body != "alice" {
				t.Fatalf("signed in: %q", body)
			}
		}
		mwtest.Do(t, alice[0], "POST", base+"/signout-everywhere", nil, nil)
		for i, cl := range alice {
			if _, body := mwtest.Get(t, cl, base+"/me", nil); body != "" {
				t.Errorf("device %d after sign-out everywhere: %q", i, body)
			}
		}
		if _, body := mwtest.Get(t, bob, base+"/me", nil); body != "bob" {
			t.Errorf("another user: %q", body)
		}
	})
	// A save of a deleted session does not bring it back.
	ctx := context.Background()
	if err := store.SaveUser(ctx, "carol", "id1", []byte("x"), time.Hour, false); err != nil {
		t.Fatal(err)
	}
	_ = store.DeleteUser(ctx, "carol")
	if err := store.SaveUser(ctx, "carol", "id1", []byte("x"), time.Hour, true); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("in-flight save after DeleteUser: %v", err)
	}
	if _, err := store.Load(ctx, "id1"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("brought back: %v", err)
	}
	if err := session.DeleteUser(ctx, failingStore{}, "x"); !errors.Is(err, session.ErrNoUserIndex) {
		t.Errorf("a store without index: %v", err)
	}
}

// A failed save of the time of use alone (Rolling) does not fail the request:
// the answer goes out and one Warn record says so; a change still gets 503.
func TestRollingSaveFailure(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	store := &saveFailing{MemoryStore: session.NewMemoryStore()}
	session.SetMemoryClock(store.MemoryStore, clk.now)
	var logs mwtest.LogBuffer
	cfg := session.Config{Store: store, Rolling: true, MaxAge: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	base := timing(t, cfg, clk)
	client, _ := jarClient(t, mwtest.Client(t))
	mwtest.Do(t, client, "POST", base+"/inc", nil, nil)
	store.set(true)
	clk.advance(10 * time.Minute)
	if resp, body := mwtest.Get(t, client, base+"/show", nil); resp.StatusCode != 200 || !strings.HasPrefix(body, "1 ") {
		t.Errorf("read with the store failing: %d %q", resp.StatusCode, body)
	}
	if n := strings.Count(logs.String(), "time of use not saved"); n != 1 {
		t.Errorf("%d records: %s", n, logs.String())
	}
	if resp, _ := mwtest.Do(t, client, "POST", base+"/inc", nil, nil); resp.StatusCode != 503 {
		t.Errorf("a change with the store failing: %d", resp.StatusCode)
	}
}

// The held answer nests with another middleware's capture, outside or inside
// the session: the body is compressed once, and the session's cookie joins it.
func TestHeldAnswerUnderCompress(t *testing.T) {
	page := strings.Repeat("a page of notes ", 64)
	write := func(c *celeris.Context) error {
		sess, err := session.Get(c)
		if err != nil {
			return err
		}
		sess.Set("seen", true)
		return c.String(200, page)
	}
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/outside", write, compress.New(compress.Config{}), session.New(session.Config{Keys: [][]byte{key1}}))
		s.GET("/inside", write, session.New(session.Config{Keys: [][]byte{key1}}), compress.New(compress.Config{}))
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, path := range []string{"/outside", "/inside"} {
			resp, body := mwtest.Get(t, client, "http://"+addr+path, mwtest.H("Accept-Encoding", "gzip"))
			zr, err := gzip.NewReader(strings.NewReader(body))
			if err != nil {
				t.Fatalf("%s: %v (Content-Encoding %q)", path, err, resp.Header.Get("Content-Encoding"))
			}
			plain, err := io.ReadAll(zr)
			if err != nil || string(plain) != page || resp.Header.Get("Set-Cookie") == "" {
				t.Errorf("%s: %d bytes %v, Set-Cookie %q", path, len(plain), err, resp.Header.Get("Set-Cookie"))
			}
		}
	})
}
