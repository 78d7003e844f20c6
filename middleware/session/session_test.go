package session_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/session"
)

var (
	key1 = bytes.Repeat([]byte{1}, 32)
	key2 = bytes.Repeat([]byte{2}, 32)
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// counter increments the session's "n" and answers "<n> <id>".
func counter(c *celeris.Context) error {
	s, err := session.Get(c)
	if err != nil {
		return err
	}
	n, _ := s.Get("n").(int)
	s.Set("n", n+1)
	return nil // saved by the middleware: nothing written yet
}

func show(c *celeris.Context) error {
	s, err := session.Get(c)
	if err != nil {
		return err
	}
	n, _ := s.Get("n").(int)
	return c.String(200, strconv.Itoa(n)+" "+s.ID())
}

func jarClient(t *testing.T, client *http.Client) (*http.Client, *cookiejar.Jar) {
	jar, _ := cookiejar.New(nil)
	client.Jar = jar
	return client, jar
}

func cookieOf(jar *cookiejar.Jar, base, name string) string {
	u, _ := url.Parse(base)
	for _, ck := range jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

func TestCookieStore(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(session.New(session.WithClock(session.Config{Keys: [][]byte{key1}, MaxAge: time.Hour}, clk.now)))
		s.POST("/inc", counter)
		s.GET("/show", show)
	})
	base := "http://" + addr
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		client, jar := jarClient(t, client)
		for range 3 {
			if resp, _ := mwtest.Do(t, client, "POST", base+"/inc", nil, nil); resp.StatusCode != 200 {
				t.Fatalf("inc: %d", resp.StatusCode)
			}
		}
		resp, body := mwtest.Get(t, client, base+"/show", nil)
		n, id, _ := strings.Cut(body, " ")
		if n != "3" || len(id) != 43 {
			t.Fatalf("show: %q", body)
		}
		if resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("an unchanged session was saved again: %q", resp.Header.Get("Set-Cookie"))
		}
		value := cookieOf(jar, base, "session")
		if strings.Contains(value, "n") && len(value) < 60 {
			t.Errorf("cookie value looks unencrypted: %q", value)
		}
		// The cookie as sent has HttpOnly, SameSite=Lax, Max-Age.
		resp, _ = mwtest.Do(t, client, "POST", base+"/inc", nil, nil)
		if sc := resp.Header.Get("Set-Cookie"); !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Lax") ||
			!strings.Contains(sc, "Max-Age=3600") || strings.Contains(sc, "Secure") {
			t.Errorf("Set-Cookie %q", sc)
		}

		// Tampered, truncated, moved to another name, or garbage: a new session.
		fresh := mwtest.Client(t)
		raw := []byte(cookieOf(jar, base, "session"))
		raw[len(raw)/2] ^= 1
		for _, ck := range []string{"session=" + string(raw), "session=" + string(raw[:20]), "session=!!!", "session="} {
			if _, body := mwtest.Get(t, fresh, base+"/show", mwtest.H("Cookie", ck)); !strings.HasPrefix(body, "0 ") || strings.HasSuffix(body, id) {
				t.Errorf("cookie %.30q...: %q", ck, body)
			}
		}
		// Expired inside the sealed value, even though the client still sends it.
		good := "session=" + cookieOf(jar, base, "session")
		clk.advance(2 * time.Hour)
		if _, body := mwtest.Get(t, fresh, base+"/show", mwtest.H("Cookie", good)); !strings.HasPrefix(body, "0 ") {
			t.Errorf("expired session accepted: %q", body)
		}
		clk.advance(-2 * time.Hour)
		if _, body := mwtest.Get(t, fresh, base+"/show", mwtest.H("Cookie", good)); !strings.HasPrefix(body, "4 ") {
			t.Errorf("replayed cookie within MaxAge: %q", body)
		}
	})
}

// The cookie's name is authenticated: a value sealed for one cookie does not
// open as another.
func TestSealer(t *testing.T) {
	v := session.Seal([][]byte{key1}, "a", []byte("payload"))
	if p, rotated, err := session.Open([][]byte{key1}, "a", v); err != nil || rotated || string(p) != "payload" {
		t.Fatalf("open: %q %v %v", p, rotated, err)
	}
	if _, _, err := session.Open([][]byte{key1}, "b", v); err == nil {
		t.Error("opened under another name")
	}
	if _, _, err := session.Open([][]byte{key2}, "a", v); err == nil {
		t.Error("opened with another key")
	}
	if _, rotated, err := session.Open([][]byte{key2, key1}, "a", v); err != nil || !rotated {
		t.Errorf("rotation: %v %v", rotated, err)
	}
	if v2 := session.Seal([][]byte{key1}, "a", []byte("payload")); v2 == v {
		t.Error("two seals of one payload are equal: the nonce is not random")
	}
}

func FuzzOpen(f *testing.F) {
	f.Add(session.Seal([][]byte{key1}, "session", []byte("x")))
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, value string) {
		if p, _, err := session.Open([][]byte{key2, key1}, "session", value); err == nil {
			// Only a value sealed with one of the keys opens; random input never does.
			if session.Seal([][]byte{key1}, "session", p) == "" {
				t.Fatal("unreachable")
			}
		}
	})
}

// Key rotation over sockets: a cookie sealed by the old key is read by a server
// whose keys are [new, old], which seals it again with the new key on the same
// answer; a server with only the new key then reads it.
func TestKeyRotation(t *testing.T) {
	start := func(keys ...[]byte) string {
		_, addr := mwtest.Start(t, func(s *celeris.Server) {
			s.Use(session.New(session.Config{Keys: keys}))
			s.POST("/inc", counter)
			s.GET("/show", show)
		})
		return "http://" + addr
	}
	oldSrv, both, newSrv := start(key1), start(key2, key1), start(key2)
	client := mwtest.Client(t)
	resp, _ := mwtest.Do(t, client, "POST", oldSrv+"/inc", nil, nil)
	ck := resp.Cookies()[0]
	if _, body := mwtest.Get(t, client, newSrv+"/show", mwtest.H("Cookie", "session="+ck.Value)); !strings.HasPrefix(body, "0 ") {
		t.Fatalf("new key alone opened an old cookie: %q", body)
	}
	resp, body := mwtest.Get(t, client, both+"/show", mwtest.H("Cookie", "session="+ck.Value))
	if !strings.HasPrefix(body, "1 ") || len(resp.Cookies()) != 1 {
		t.Fatalf("rotation: %q, cookies %v", body, resp.Cookies())
	}
	resealed := resp.Cookies()[0].Value
	if _, body := mwtest.Get(t, client, newSrv+"/show", mwtest.H("Cookie", "session="+resealed)); !strings.HasPrefix(body, "1 ") {
		t.Fatalf("resealed cookie: %q", body)
	}
}

// A server-side store with login (Regenerate), logout (Destroy), and an
// attacker-chosen ID that is never adopted.
func TestStoreFixation(t *testing.T) {
	store := session.NewMemoryStore()
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(session.New(session.Config{Store: store, CookieName: "sid"}))
		s.POST("/inc", counter)
		s.GET("/show", show)
		s.POST("/login", func(c *celeris.Context) error {
			s, err := session.Get(c)
			if err != nil {
				return err
			}
			s.Regenerate()
			s.Set("user", c.FormValue("user"))
			if err := s.Save(); err != nil { // before writing the answer
				return err
			}
			return c.String(200, s.GetString("user")+" "+s.ID())
		})
		s.POST("/logout", func(c *celeris.Context) error {
			s, err := session.Get(c)
			if err != nil {
				return err
			}
			s.Destroy()
			return nil
		})
	})
	base := "http://" + addr
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		client, jar := jarClient(t, client)
		mwtest.Do(t, client, "POST", base+"/inc", nil, nil)
		before := cookieOf(jar, base, "sid")
		if _, err := store.Load(context.Background(), before); err != nil {
			t.Fatalf("store lacks the session: %v", err)
		}
		_, body := mwtest.Do(t, client, "POST", base+"/login?user=alice", nil, nil)
		user, id, _ := strings.Cut(body, " ")
		after := cookieOf(jar, base, "sid")
		if user != "alice" || id != after || after == before {
			t.Fatalf("login: %q, cookie %q -> %q", body, before, after)
		}
		if _, err := store.Load(context.Background(), before); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("the pre-login ID still works: %v", err)
		}
		if _, body := mwtest.Get(t, client, base+"/show", nil); body != "1 "+after {
			t.Errorf("values lost by Regenerate: %q", body)
		}
		// Logout: the cookie is deleted and the store forgets the ID.
		resp, _ := mwtest.Do(t, client, "POST", base+"/logout", nil, nil)
		if sc := resp.Header.Get("Set-Cookie"); !strings.Contains(sc, "Max-Age=0") {
			t.Errorf("logout Set-Cookie %q", sc)
		}
		if _, err := store.Load(context.Background(), after); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("the logged-out ID still works: %v", err)
		}
		if cookieOf(jar, base, "sid") != "" {
			t.Error("the jar kept the cookie")
		}
	})
	// An ID the store does not know (planted by an attacker) is replaced.
	planted := strings.Repeat("A", 43)
	resp, _ := mwtest.Do(t, mwtest.Client(t), "POST", base+"/inc", mwtest.H("Cookie", "sid="+planted), nil)
	if ck := resp.Cookies(); len(ck) != 1 || ck[0].Value == planted || len(ck[0].Value) != 43 {
		t.Errorf("planted ID: %v", ck)
	}
	if _, err := store.Load(context.Background(), planted); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("planted ID adopted: %v", err)
	}
}

// A handler that writes a complete answer need not call Save: the middleware
// saves before the answer leaves, with its Set-Cookie field, and a Save after
// the write is left to the middleware. A streamed answer leaves first: a change
// that needs a Set-Cookie field is then lost and logged once (ErrNotSaved). A
// session too large for a cookie is ErrTooLarge (500).
func TestNotSaved(t *testing.T) {
	errs := make(chan error, 4)
	var logs mwtest.LogBuffer
	cfg := celeris.Config{Logger: slog.New(slog.DiscardHandler), ErrorHandler: func(c *celeris.Context, err error) {
		errs <- err
		celeris.DefaultErrorHandler(c, err)
	}}
	_, addr := mwtest.StartConfig(t, cfg, func(s *celeris.Server) {
		s.Use(session.New(session.Config{Keys: [][]byte{key1}, Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
		s.GET("/show", show)
		s.GET("/forgot", func(c *celeris.Context) error {
			s, _ := session.Get(c)
			s.Set("n", 5)
			return c.String(200, "written")
		})
		s.GET("/late", func(c *celeris.Context) error {
			s, _ := session.Get(c)
			s.Set("n", 7)
			if err := c.String(200, "written"); err != nil {
				return err
			}
			return s.Save()
		})
		s.GET("/stream", func(c *celeris.Context) error {
			s, _ := session.Get(c)
			s.Set("n", 9)
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			_, err = w.Write([]byte("streamed"))
			return err
		})
		s.GET("/big", func(c *celeris.Context) error {
			s, _ := session.Get(c)
			s.Set("x", strings.Repeat("y", 5000))
			return nil
		})
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		logs.Reset()
		client, _ = jarClient(t, client)
		base := "http://" + addr
		for _, tt := range []struct{ path, want string }{{path: "/forgot", want: "5 "}, {path: "/late", want: "7 "}} {
			resp, body := mwtest.Get(t, client, base+tt.path, nil)
			if resp.StatusCode != 200 || body != "written" || resp.Header.Get("Set-Cookie") == "" {
				t.Errorf("%s: %d %q Set-Cookie %q", tt.path, resp.StatusCode, body, resp.Header.Get("Set-Cookie"))
			}
			if _, body := mwtest.Get(t, client, base+"/show", nil); !strings.HasPrefix(body, tt.want) {
				t.Errorf("after %s: %q", tt.path, body)
			}
		}
		resp, body := mwtest.Get(t, client, base+"/stream", nil)
		if resp.StatusCode != 200 || body != "streamed" || resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("/stream: %d %q %q", resp.StatusCode, body, resp.Header.Get("Set-Cookie"))
		}
		if n := strings.Count(logs.String(), "session: not saved"); n != 1 || strings.Count(logs.String(), "path=/stream") != 1 {
			t.Errorf("%d records: %s", n, logs.String())
		}
		resp, _ = mwtest.Get(t, client, base+"/big", nil)
		select {
		case err := <-errs:
			if !errors.Is(err, session.ErrTooLarge) || resp.StatusCode != 500 || resp.Header.Get("Set-Cookie") != "" {
				t.Errorf("/big: %d %v", resp.StatusCode, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("/big: no error")
		}
	})
}

func TestMemoryStoreExpiry(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	s := session.NewMemoryStore()
	session.SetMemoryClock(s, clk.now)
	ctx := context.Background()
	_ = s.Save(ctx, "a", []byte("1"), time.Minute)
	_ = s.Save(ctx, "b", []byte("2"), time.Hour)
	if d, err := s.Load(ctx, "a"); err != nil || string(d) != "1" {
		t.Fatalf("load: %q %v", d, err)
	}
	clk.advance(2 * time.Minute)
	if _, err := s.Load(ctx, "a"); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("expired: %v", err)
	}
	_ = s.Save(ctx, "c", nil, time.Minute)
	_ = s.Delete(ctx, "c")
	_ = s.Delete(ctx, "missing")
	if n := s.Len(); n != 1 {
		t.Errorf("Len %d", n)
	}
}

// Over TLS the session cookie is Secure, and the session round-trips over
// HTTP/2.
func TestSecureCookieOverTLS(t *testing.T) {
	cert, err := selfcert.New("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := mwtest.StartConfig(t, celeris.Config{TLSAddr: "127.0.0.1:0",
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}}, func(s *celeris.Server) {
		s.Use(session.New(session.Config{Keys: [][]byte{key1}}))
		s.POST("/inc", counter)
		s.GET("/show", show)
	})
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool()}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Jar: jar}
	base := "https://" + s.TLSAddr().String()
	resp, _ := mwtest.Do(t, client, "POST", base+"/inc", nil, nil)
	if sc := resp.Header.Get("Set-Cookie"); !strings.Contains(sc, "; Secure") || resp.ProtoMajor != 2 {
		t.Fatalf("%s Set-Cookie %q", resp.Proto, sc)
	}
	if _, body := mwtest.Get(t, client, base+"/show", nil); !strings.HasPrefix(body, "1 ") {
		t.Errorf("show: %q", body)
	}
}

type failingStore struct{}

func (failingStore) Load(context.Context, string) ([]byte, error) {
	return nil, errors.New("store down")
}
func (failingStore) Save(context.Context, string, []byte, time.Duration) error {
	return errors.New("store down")
}
func (failingStore) Delete(context.Context, string) error { return errors.New("store down") }

// A Store that fails: Get reports it every time (never a half-loaded session),
// and the handler's error is a 503 (a dependency is down).
func TestStoreFailure(t *testing.T) {
	seconds := make(chan error, 1)
	quiet := celeris.Config{Logger: slog.New(slog.DiscardHandler)}
	_, addr := mwtest.StartConfig(t, quiet, func(s *celeris.Server) {
		s.Use(session.New(session.Config{Store: failingStore{}}))
		s.GET("/", func(c *celeris.Context) error {
			if _, err := session.Get(c); err == nil {
				return c.String(200, "first Get succeeded")
			}
			_, err := session.Get(c)
			seconds <- err
			return err
		})
	})
	resp, body := mwtest.Get(t, mwtest.Client(t), "http://"+addr+"/", mwtest.H("Cookie", "session="+strings.Repeat("A", 43)))
	var second error
	select {
	case second = <-seconds:
	default:
	}
	if resp.StatusCode != 503 || second == nil || !strings.Contains(second.Error(), "store down") || !errors.Is(second, session.ErrStore) {
		t.Errorf("%d %q, second Get: %v", resp.StatusCode, body, second)
	}
}

// BenchmarkSealOpen: one cookie store round trip of a small session value.
func BenchmarkSealOpen(b *testing.B) {
	keys := [][]byte{key1}
	payload := bytes.Repeat([]byte("x"), 200)
	b.ReportAllocs()
	for b.Loop() {
		v := session.Seal(keys, "session", payload)
		if _, _, err := session.Open(keys, "session", v); err != nil {
			b.Fatal(err)
		}
	}
}

// With a Store, a change made before the handler writes its answer is saved
// before the answer leaves, also for a regenerated session, whose new cookie
// joins the answer.
func TestStoreSaveAfterWrite(t *testing.T) {
	store := session.NewMemoryStore()
	var logs mwtest.LogBuffer
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(session.New(session.Config{Store: store, Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
		s.POST("/inc", counter)
		s.GET("/show", show)
		s.POST("/write", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			n, _ := sess.Get("n").(int)
			sess.Set("n", n+10)
			if c.Query("regenerate") != "" {
				sess.Regenerate()
			}
			return c.String(200, "written first")
		})
	})
	base := "http://" + addr
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		client, _ = jarClient(t, client)
		mwtest.Do(t, client, "POST", base+"/inc", nil, nil)
		resp, _ := mwtest.Do(t, client, "POST", base+"/write", nil, nil)
		if sc := resp.Header.Get("Set-Cookie"); sc == "" {
			t.Errorf("no Set-Cookie")
		}
		if _, body := mwtest.Get(t, client, base+"/show", nil); !strings.HasPrefix(body, "11 ") {
			t.Errorf("after a write-first change: %q", body)
		}
		mwtest.Do(t, client, "POST", base+"/write?regenerate=1", nil, nil)
		if _, body := mwtest.Get(t, client, base+"/show", nil); !strings.HasPrefix(body, "21 ") {
			t.Errorf("a regenerated session: %q", body)
		}
	})
	if n := strings.Count(logs.String(), "session: not saved"); n != 0 {
		t.Errorf("%d records: %s", n, logs.String())
	}
}

// saveFailing is a MemoryStore whose Save fails while fail is set.
type saveFailing struct {
	*session.MemoryStore
	mu   sync.Mutex
	fail bool
}

func (s *saveFailing) set(fail bool) { s.mu.Lock(); s.fail = fail; s.mu.Unlock() }

func (s *saveFailing) Save(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	s.mu.Lock()
	fail := s.fail
	s.mu.Unlock()
	if fail {
		return errors.New("store down")
	}
	return s.MemoryStore.Save(ctx, id, data, ttl)
}

// When the save fails, the client gets 503 instead of the answer the handler
// wrote, for a new session and for one its cookie names, and the session keeps
// its last saved value; a handler that wrote nothing gets 503 too.
func TestSaveFailureAnswers503(t *testing.T) {
	store := &saveFailing{MemoryStore: session.NewMemoryStore()}
	quiet := celeris.Config{Logger: slog.New(slog.DiscardHandler)}
	_, addr := mwtest.StartConfig(t, quiet, func(s *celeris.Server) {
		s.Use(session.New(session.Config{Store: store, Logger: slog.New(slog.DiscardHandler)}))
		s.POST("/inc", counter)
		s.GET("/show", show)
		s.POST("/write", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			n, _ := sess.Get("n").(int)
			sess.Set("n", n+10)
			c.SetHeader("Location", "/elsewhere")
			return c.JSON(200, map[string]int{"n": n + 10})
		})
	})
	base := "http://" + addr
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		store.set(true)
		fresh := mwtest.Client(t)
		for _, tt := range []struct {
			name   string
			client *http.Client
			method string
			path   string
		}{
			{name: "new session", client: fresh, method: "POST", path: "/write"},
			{name: "nothing written", client: fresh, method: "POST", path: "/inc"},
		} {
			resp, body := mwtest.Do(t, tt.client, tt.method, base+tt.path, nil, nil)
			if resp.StatusCode != 503 || resp.Header.Get("Set-Cookie") != "" || resp.Header.Get("Location") != "" ||
				strings.Contains(body, "{") {
				t.Errorf("%s: %d %q %v", tt.name, resp.StatusCode, body, resp.Header)
			}
		}
		store.set(false)
		client, _ = jarClient(t, client)
		mwtest.Do(t, client, "POST", base+"/inc", nil, nil)
		store.set(true)
		resp, body := mwtest.Do(t, client, "POST", base+"/write", nil, nil)
		if resp.StatusCode != 503 || body != "Service Unavailable" || resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Errorf("known session: %d %q %v", resp.StatusCode, body, resp.Header)
		}
		store.set(false)
		if _, body := mwtest.Get(t, client, base+"/show", nil); !strings.HasPrefix(body, "1 ") {
			t.Errorf("after the failed save: %q", body)
		}
		if resp, body := mwtest.Do(t, client, "POST", base+"/write", nil, nil); resp.StatusCode != 200 || body != `{"n":11}` {
			t.Errorf("store back: %d %q", resp.StatusCode, body)
		}
	})
}
