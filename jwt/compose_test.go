package jwt_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/jwt"
	"github.com/celeris-dev/celeris/middleware/auth"
	"github.com/celeris-dev/celeris/middleware/keyauth"
	gjwt "github.com/golang-jwt/jwt/v5"
)

// An alg outside the accepted list is described as refused, not as a key
// that does not verify.
func TestAlgNoneDescribed(t *testing.T) {
	k := getKeys(t)
	url := start(t, celeris.Config{}, jwt.New(jwt.Config{Key: k.hmac}))
	none := sign(t, gjwt.SigningMethodNone, gjwt.UnsafeAllowNoneSignatureType, gjwt.MapClaims{"sub": "x"}, nil)
	es := sign(t, gjwt.SigningMethodES256, k.ec, gjwt.MapClaims{"sub": "x"}, nil)
	for tok, want := range map[string]string{none: `error_description="alg none refused"`, es: `error_description="alg ES256 refused"`} {
		code, _, ch := get(t, clients(t)["h1"], url, "Bearer "+tok)
		if code != 401 || !strings.HasSuffix(ch, want) {
			t.Errorf("%d %q, want %q", code, ch, want)
		}
	}
}

// Key and KeySet together: a token without kid is verified with Key, one
// with a kid by the set (fetching a new kid); a kid the set lacks falls back to
// Key.
func TestKeyAndKeySet(t *testing.T) {
	k := getKeys(t)
	provider := &jwksServer{}
	provider.set(rsaJWK("rsa-1", &k.rsa.PublicKey))
	ts := httptest.NewServer(provider)
	defer ts.Close()
	ks, err := jwt.NewKeySet(context.Background(), jwt.KeySetConfig{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	url := start(t, celeris.Config{}, jwt.New(jwt.Config{Key: k.hmac, KeySet: ks}))
	claims := gjwt.MapClaims{"sub": "bob", "role": "dev"}
	for _, tt := range []struct {
		name, tok string
		status    int
	}{
		{name: "HS256 without kid", tok: sign(t, gjwt.SigningMethodHS256, k.hmac, claims, nil), status: 200},
		{name: "HS256 with a kid the set lacks", tok: sign(t, gjwt.SigningMethodHS256, k.hmac, claims, map[string]any{"kid": "internal"}), status: 200},
		{name: "RS256 rsa-1", tok: sign(t, gjwt.SigningMethodRS256, k.rsa, claims, map[string]any{"kid": "rsa-1"}), status: 200},
		{name: "HS256 with another secret", tok: sign(t, gjwt.SigningMethodHS256, []byte("another-secret-of-32-bytes-or-more!!"), claims, nil), status: 401},
		{name: "RS256 without kid", tok: sign(t, gjwt.SigningMethodRS256, k.rsa, claims, nil), status: 401},
	} {
		for proto, client := range clients(t) {
			if code, body, ch := get(t, client, url, "Bearer "+tt.tok); code != tt.status {
				t.Errorf("%s %s: %d %q %q", proto, tt.name, code, body, ch)
			}
		}
	}
}

// A kid the provider published right after the server started is fetched on
// its first token, although MinRefreshInterval has not passed since the
// start-up fetch; the next unknown kid waits for MinRefreshInterval.
func TestKeySetNewKidAtStart(t *testing.T) {
	k := getKeys(t)
	provider := &jwksServer{}
	provider.set(rsaJWK("rsa-1", &k.rsa.PublicKey))
	ts := httptest.NewServer(provider)
	defer ts.Close()
	ks, err := jwt.NewKeySet(context.Background(), jwt.KeySetConfig{URL: ts.URL, MinRefreshInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	url := start(t, celeris.Config{}, jwt.New(jwt.Config{KeySet: ks}))
	provider.set(rsaJWK("rsa-1", &k.rsa.PublicKey), ecJWK("ec-1", &k.ec.PublicKey))
	tok := sign(t, gjwt.SigningMethodES256, k.ec, gjwt.MapClaims{"sub": "x"}, map[string]any{"kid": "ec-1"})
	if code, body, _ := get(t, clients(t)["h1"], url, "Bearer "+tok); code != 200 || provider.fetches.Load() != 2 {
		t.Errorf("new kid at start: %d %q, %d fetches", code, body, provider.fetches.Load())
	}
	made := sign(t, gjwt.SigningMethodES256, k.ec, gjwt.MapClaims{"sub": "x"}, map[string]any{"kid": "nope"})
	if code, _, _ := get(t, clients(t)["h1"], url, "Bearer "+made); code != 401 || provider.fetches.Load() != 2 {
		t.Errorf("made-up kid: %d, %d fetches", code, provider.fetches.Load())
	}
}

// slowProvider serves rsa-1 at once and holds every later fetch until release
// is closed.
type slowProvider struct {
	*jwksServer
	release chan struct{}
	started *atomic.Int32
}

func (p slowProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.started.Add(1) > 1 {
		select {
		case <-p.release:
		case <-r.Context().Done():
			return
		}
	}
	p.jwksServer.ServeHTTP(w, r)
}

// A new kid while the provider is slow: the request waits for the fetch only
// as long as its own context (the client leaves: the handler's chain returns at
// once, a 503 for a timeout), and requests arriving meanwhile share that one
// fetch, which goes on and serves them when the provider answers.
func TestKeySetSlowProvider(t *testing.T) {
	k := getKeys(t)
	provider := slowProvider{jwksServer: &jwksServer{}, release: make(chan struct{}), started: new(atomic.Int32)}
	provider.set(rsaJWK("rsa-1", &k.rsa.PublicKey))
	ts := httptest.NewServer(provider)
	defer ts.Close()
	ks, err := jwt.NewKeySet(context.Background(), jwt.KeySetConfig{URL: ts.URL})
	if err != nil {
		t.Fatal(err)
	}
	provider.set(rsaJWK("rsa-1", &k.rsa.PublicKey), ecJWK("ec-1", &k.ec.PublicKey))
	returned := make(chan time.Duration, 4)
	_, addr := celeristest.Serve(t, celeris.Config{Logger: slog.New(slog.DiscardHandler)}, func(s *celeris.Server) {
		s.Use(func(next celeris.HandlerFunc) celeris.HandlerFunc {
			return func(c *celeris.Context) error {
				t0 := time.Now()
				err := next(c)
				returned <- time.Since(t0)
				return err
			}
		})
		s.GET("/me", func(c *celeris.Context) error { return c.String(200, jwt.Subject(c)) }, jwt.New(jwt.Config{KeySet: ks}))
	})
	tok := "Bearer " + sign(t, gjwt.SigningMethodES256, k.ec, gjwt.MapClaims{"sub": "eve"}, map[string]any{"kid": "ec-1"})
	for proto, client := range clients(t) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/me", nil)
		req.Header.Set("Authorization", tok)
		_, err := client.Do(req)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: the request did not wait for the provider: %v", proto, err)
		}
		select {
		case d := <-returned:
			if d > 2*time.Second {
				t.Errorf("%s: the chain returned %v after the client left", proto, d)
			}
		case <-time.After(3 * time.Second):
			t.Errorf("%s: the chain still waits for the provider after the client left", proto)
		}
	}
	if n := provider.started.Load(); n != 2 {
		t.Errorf("%d fetches, want one shared fetch after the first", n)
	}
	// A request waiting with the fetch under way is served when it ends.
	got := make(chan int, 1)
	go func() {
		code, _, _ := get(t, clients(t)["h1"], "http://"+addr+"/me", tok)
		got <- code
	}()
	time.Sleep(100 * time.Millisecond)
	close(provider.release)
	if code := <-got; code != 200 {
		t.Errorf("after the provider answered: %d", code)
	}
	<-returned
	if n := provider.started.Load(); n != 2 {
		t.Errorf("%d fetches", n)
	}
}

// StartWhenDown: the provider is down at start-up; NewKeySet returns a set
// with the error, tokens get 503 meanwhile, and once the provider is back a
// request's fetch (at most once per MinRefreshInterval) brings the keys.
func TestKeySetStartWhenDown(t *testing.T) {
	k := getKeys(t)
	provider := &jwksServer{}
	provider.set(rsaJWK("rsa-1", &k.rsa.PublicKey))
	provider.fail.Store(true)
	ts := httptest.NewServer(provider)
	defer ts.Close()
	clk := &fakeClock{t: time.Now()}
	if _, err := jwt.NewKeySet(context.Background(), jwt.KeySetConfig{URL: ts.URL}); err == nil {
		t.Fatal("NewKeySet without StartWhenDown: no error")
	}
	ks, err := jwt.NewKeySet(context.Background(), jwt.KeySetWithClock(jwt.KeySetConfig{URL: ts.URL, StartWhenDown: true}, clk.now))
	if ks == nil || err == nil {
		t.Fatalf("StartWhenDown: %v %v", ks, err)
	}
	url := start(t, celeris.Config{}, jwt.New(jwt.Config{KeySet: ks}))
	tok := "Bearer " + sign(t, gjwt.SigningMethodRS256, k.rsa, gjwt.MapClaims{"sub": "x"}, map[string]any{"kid": "rsa-1"})
	client := clients(t)["h1"]
	if code, _, _ := get(t, client, url, tok); code != 503 {
		t.Errorf("provider down: %d", code)
	}
	provider.fail.Store(false)
	clk.advance(2 * time.Minute)
	deadline := time.Now().Add(5 * time.Second)
	code := 0
	for code != 200 && time.Now().Before(deadline) {
		code, _, _ = get(t, client, url, tok)
		time.Sleep(10 * time.Millisecond)
	}
	if code != 200 || ks.Len() != 1 {
		t.Errorf("provider back: %d, %d keys", code, ks.Len())
	}
}

// "JWT or API key" through auth.Any, both as Bearer tokens: each yields its
// principal, and jwt.RequireScopes and auth.RequireScopes check an API key's
// scopes as a token's (an API key got 401 "missing bearer token" from
// jwt.RequireScopes when it read the token's claims only).
func TestAnyJWTOrAPIKey(t *testing.T) {
	k := getKeys(t)
	keyScopes := map[string][]string{"ci": {"orders:read"}}
	_, addr := celeristest.Serve(t, celeris.Config{Logger: slog.New(slog.DiscardHandler)}, func(s *celeris.Server) {
		api := s.Group("/api", auth.Any(
			jwt.Authenticator(jwt.Config{Key: k.hmac, Realm: "api"}),
			keyauth.Authenticator(keyauth.Config{Keys: map[string]string{"k-ci": "ci"}, Lookup: "auth:Bearer", Realm: "api"},
				func(name string) []string { return keyScopes[name] }),
		))
		who := func(c *celeris.Context) error {
			p := auth.From(c)
			return c.String(200, p.Kind+" "+p.ID+" "+strings.Join(p.Scopes, ","))
		}
		api.GET("/read", who, jwt.RequireScopes("orders:read"))
		api.GET("/write", who, auth.RequireScopes("orders:write"))
		api.GET("/claims", func(c *celeris.Context) error {
			return c.String(200, auth.From(c).Claims["role"].(string))
		}, auth.Require(func(_ *celeris.Context, p *auth.Principal) error {
			if p.Claims["role"] != "admin" {
				return errors.New("not an admin")
			}
			return nil
		}))
	})
	base := "http://" + addr + "/api"
	jwtTok := "Bearer " + sign(t, gjwt.SigningMethodHS256, k.hmac, gjwt.MapClaims{"sub": "alice", "scope": "orders:read orders:write", "role": "admin"}, nil)
	for proto, client := range clients(t) {
		for _, tt := range []struct {
			name, path, auth string
			status           int
			body, challenge  string
		}{
			{name: "jwt read", path: "/read", auth: jwtTok, status: 200, body: "jwt alice orders:read,orders:write"},
			{name: "jwt write", path: "/write", auth: jwtTok, status: 200},
			{name: "jwt policy", path: "/claims", auth: jwtTok, status: 200, body: "admin"},
			{name: "key read", path: "/read", auth: "Bearer k-ci", status: 200, body: "apikey ci orders:read"},
			{name: "key write", path: "/write", auth: "Bearer k-ci", status: 403},
			{name: "key policy", path: "/claims", auth: "Bearer k-ci", status: 403},
			{name: "neither", path: "/read", auth: "Bearer nonsense", status: 401,
				challenge: `Bearer realm="api", error="invalid_token", error_description="malformed token"`},
			{name: "none", path: "/read", status: 401, challenge: `Bearer realm="api"`},
		} {
			code, body, ch := get(t, client, base+tt.path, tt.auth)
			if code != tt.status || (tt.body != "" && body != tt.body) || (tt.challenge != "" && ch != tt.challenge) {
				t.Errorf("%s %s: %d %q %q", proto, tt.name, code, body, ch)
			}
		}
	}
	// A token lacking the scope: 403 with RFC 6750's insufficient_scope.
	weak := "Bearer " + sign(t, gjwt.SigningMethodHS256, k.hmac, gjwt.MapClaims{"sub": "bob", "scope": "orders:read"}, nil)
	if code, _, ch := get(t, clients(t)["h1"], base+"/write", weak); code != 403 || ch != `Bearer error="insufficient_scope", scope="orders:write"` {
		t.Errorf("weak token: %d %q", code, ch)
	}
}
