package jwt_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/jwt"
	gjwt "github.com/golang-jwt/jwt/v5"
)

type keys struct {
	hmac []byte
	rsa  *rsa.PrivateKey
	ec   *ecdsa.PrivateKey
	ed   ed25519.PrivateKey
}

var (
	testKeysOnce sync.Once
	testKeys     keys
)

func getKeys(t testing.TB) keys {
	testKeysOnce.Do(func() {
		testKeys.hmac = []byte("a-secret-of-at-least-32-bytes-for-hs256!")
		var err error
		if testKeys.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if testKeys.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
		if _, testKeys.ed, err = ed25519.GenerateKey(rand.Reader); err != nil {
			panic(err)
		}
	})
	return testKeys
}

func sign(t testing.TB, method gjwt.SigningMethod, key any, claims gjwt.MapClaims, header map[string]any) string {
	t.Helper()
	tok := gjwt.NewWithClaims(method, claims)
	for k, v := range header {
		tok.Header[k] = v
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// start serves /me behind mw: it answers the subject and the "role" claim.
func start(t *testing.T, cfg celeris.Config, mw celeris.MiddlewareFunc) string {
	t.Helper()
	cfg.Logger = slog.New(slog.DiscardHandler)
	_, addr := celeristest.Serve(t, cfg, func(s *celeris.Server) {
		s.GET("/me", func(c *celeris.Context) error {
			claims := jwt.GetClaims(c).(jwt.MapClaims)
			role, _ := claims["role"].(string)
			return c.String(200, jwt.Subject(c)+" "+role)
		}, mw)
	})
	return "http://" + addr + "/me"
}

func clients(t *testing.T) map[string]*http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	h1, h2 := &http.Transport{}, &http.Transport{Protocols: &p}
	t.Cleanup(h1.CloseIdleConnections)
	t.Cleanup(h2.CloseIdleConnections)
	return map[string]*http.Client{"h1": {Transport: h1, Timeout: 10 * time.Second}, "h2c": {Transport: h2, Timeout: 10 * time.Second}}
}

func get(t *testing.T, client *http.Client, url, auth string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("WWW-Authenticate")
}

func TestAlgorithms(t *testing.T) {
	k := getKeys(t)
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { return now }
	claims := func(extra ...any) gjwt.MapClaims {
		c := gjwt.MapClaims{"sub": "alice", "role": "admin", "exp": now.Add(time.Hour).Unix(), "iss": "https://id.example", "aud": "api"}
		for i := 0; i+1 < len(extra); i += 2 {
			if extra[i+1] == nil {
				delete(c, extra[i].(string))
			} else {
				c[extra[i].(string)] = extra[i+1]
			}
		}
		return c
	}
	opts := func(key any) jwt.Config {
		return jwt.WithClock(jwt.Config{Key: key, Issuer: "https://id.example", Audience: "api", Realm: "api"}, clock)
	}
	urls := map[string]string{
		"hs":  start(t, celeris.Config{}, jwt.New(opts(k.hmac))),
		"rs":  start(t, celeris.Config{}, jwt.New(opts(&k.rsa.PublicKey))),
		"es":  start(t, celeris.Config{}, jwt.New(opts(&k.ec.PublicKey))),
		"ed":  start(t, celeris.Config{}, jwt.New(opts(k.ed.Public()))),
		"exp": start(t, celeris.Config{}, jwt.New(jwt.WithClock(jwt.Config{Key: k.hmac, RequireExpiry: true, Leeway: time.Minute}, clock))),
	}
	rsaDER, _ := x509.MarshalPKIXPublicKey(&k.rsa.PublicKey)
	noneTok := sign(t, gjwt.SigningMethodNone, gjwt.UnsafeAllowNoneSignatureType, claims(), nil)
	const invalid = `Bearer realm="api", error="invalid_token", error_description="`
	tests := []struct {
		name, url, auth string
		status          int
		challenge       string // prefix
	}{
		{name: "HS256", url: urls["hs"], auth: "Bearer " + sign(t, gjwt.SigningMethodHS256, k.hmac, claims(), nil), status: 200},
		{name: "HS512", url: urls["hs"], auth: "Bearer " + sign(t, gjwt.SigningMethodHS512, k.hmac, claims(), nil), status: 200},
		{name: "RS256", url: urls["rs"], auth: "Bearer " + sign(t, gjwt.SigningMethodRS256, k.rsa, claims(), nil), status: 200},
		{name: "PS384", url: urls["rs"], auth: "Bearer " + sign(t, gjwt.SigningMethodPS384, k.rsa, claims(), nil), status: 200},
		{name: "ES256", url: urls["es"], auth: "Bearer " + sign(t, gjwt.SigningMethodES256, k.ec, claims(), nil), status: 200},
		{name: "EdDSA", url: urls["ed"], auth: "bearer " + sign(t, gjwt.SigningMethodEdDSA, k.ed, claims(), nil), status: 200},
		{name: "missing", url: urls["hs"], status: 401, challenge: `Bearer realm="api"`},
		{name: "basic scheme", url: urls["hs"], auth: "Basic YTpi", status: 401, challenge: `Bearer realm="api"`},
		{name: "wrong secret", url: urls["hs"], auth: "Bearer " + sign(t, gjwt.SigningMethodHS256, []byte("another secret of 32 bytes or more..."), claims(), nil),
			status: 401, challenge: invalid + `signature invalid"`},
		{name: "alg none", url: urls["hs"], auth: "Bearer " + noneTok, status: 401, challenge: invalid},
		// RFC 8725 §2.1: an HMAC token keyed with the RSA public key's bytes.
		{name: "HS256 with the RSA public key", url: urls["rs"], auth: "Bearer " + sign(t, gjwt.SigningMethodHS256, rsaDER, claims(), nil),
			status: 401, challenge: invalid},
		{name: "RS256 on an EC server", url: urls["es"], auth: "Bearer " + sign(t, gjwt.SigningMethodRS256, k.rsa, claims(), nil), status: 401, challenge: invalid},
		{name: "expired", url: urls["hs"], auth: "Bearer " + sign(t, gjwt.SigningMethodHS256, k.hmac, claims("exp", now.Add(-time.Second).Unix()), nil),
			status: 401, challenge: invalid + `token expired"`},
		{name: "not yet", url: urls["hs"], auth: "Bearer " + sign(t, gjwt.SigningMethodHS256, k.hmac, claims("nbf", now.Add(time.Minute).Unix()), nil),
			status: 401, challenge: invalid + `token not valid yet"`},
		{name: "wrong issuer", url: urls["hs"], auth: "Bearer " + sign(t, gjwt.SigningMethodHS256, k.hmac, claims("iss", "https://evil.example"), nil),
			status: 401, challenge: invalid + `wrong issuer"`},
		{name: "wrong audience", url: urls["hs"], auth: "Bearer " + sign(t, gjwt.SigningMethodHS256, k.hmac, claims("aud", "other"), nil),
			status: 401, challenge: invalid + `wrong audience"`},
		{name: "malformed", url: urls["hs"], auth: "Bearer not.a.jwt", status: 401, challenge: invalid + `malformed token"`},
		{name: "huge", url: urls["hs"], auth: "Bearer " + strings.Repeat("a", 9000), status: 401, challenge: invalid + `malformed token"`},
		{name: "expiry required", url: urls["exp"], auth: "Bearer " + sign(t, gjwt.SigningMethodHS256, k.hmac, claims("exp", nil), nil),
			status: 401, challenge: `Bearer realm="Restricted", error="invalid_token", error_description="required claim missing"`},
		{name: "leeway", url: urls["exp"], auth: "Bearer " + sign(t, gjwt.SigningMethodHS256, k.hmac, claims("exp", now.Add(-30*time.Second).Unix()), nil), status: 200},
	}
	for proto, client := range clients(t) {
		t.Run(proto, func(t *testing.T) {
			for _, tt := range tests {
				status, body, challenge := get(t, client, tt.url, tt.auth)
				if status != tt.status || !strings.HasPrefix(challenge, tt.challenge) || (tt.challenge == "") != (challenge == "") {
					t.Errorf("%s: %d %q, challenge %q, want %d %q", tt.name, status, body, challenge, tt.status, tt.challenge)
				}
				if status == 200 && body != "alice admin" {
					t.Errorf("%s: body %q", tt.name, body)
				}
			}
		})
	}
}

func TestNewPanics(t *testing.T) {
	for name, cfg := range map[string]jwt.Config{
		"no key":                {},
		"Keyfunc without algs":  {Keyfunc: func(*gjwt.Token) (any, error) { return nil, nil }},
		"unsupported key type":  {Key: "a string"},
		"malformed Lookup":      {Key: []byte("k"), Lookup: "header"},
		"unknown Lookup source": {Key: []byte("k"), Lookup: "form:x"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: New did not panic", name)
				}
			}()
			jwt.New(cfg)
		}()
	}
}

// A Keyfunc with its algorithm list, and the token from a cookie.
func TestKeyfuncAndCookie(t *testing.T) {
	k := getKeys(t)
	url := start(t, celeris.Config{}, jwt.New(jwt.Config{
		Keyfunc:    func(*gjwt.Token) (any, error) { return k.hmac, nil },
		Algorithms: []string{"HS256"},
		Lookup:     "cookie:token",
	}))
	claims := gjwt.MapClaims{"sub": "carol", "role": "ops"}
	for _, tt := range []struct {
		method gjwt.SigningMethod
		status int
	}{
		{method: gjwt.SigningMethodHS256, status: 200},
		{method: gjwt.SigningMethodHS384, status: 401},
	} {
		req, _ := http.NewRequest("GET", url, nil)
		req.AddCookie(&http.Cookie{Name: "token", Value: sign(t, tt.method, k.hmac, claims, nil)})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || (tt.status == 200 && string(b) != "carol ops") {
			t.Errorf("%s: %d %q", tt.method.Alg(), resp.StatusCode, b)
		}
	}
}

func TestRequireScopes(t *testing.T) {
	k := getKeys(t)
	_, addr := celeristest.Serve(t, celeris.Config{Logger: slog.New(slog.DiscardHandler)}, func(s *celeris.Server) {
		auth := jwt.New(jwt.Config{Key: k.hmac})
		ok := func(c *celeris.Context) error { return c.String(200, "ok") }
		s.GET("/read", ok, auth, jwt.RequireScopes("orders:read"))
		s.GET("/write", ok, auth, jwt.RequireScopes("orders:read", "orders:write"))
		s.GET("/noauth", ok, jwt.RequireScopes("x"))
	})
	tok := func(claims gjwt.MapClaims) string {
		return "Bearer " + sign(t, gjwt.SigningMethodHS256, k.hmac, claims, nil)
	}
	const insufficient = `Bearer error="insufficient_scope", scope="orders:read orders:write"`
	for proto, client := range clients(t) {
		for _, tt := range []struct {
			name, path, auth string
			status           int
			challenge        string
		}{
			{name: "scope string", path: "/read", auth: tok(gjwt.MapClaims{"scope": "profile orders:read"}), status: 200},
			{name: "scp array", path: "/write", auth: tok(gjwt.MapClaims{"scp": []string{"orders:write", "orders:read"}}), status: 200},
			{name: "scp string", path: "/read", auth: tok(gjwt.MapClaims{"scp": "orders:read"}), status: 200},
			{name: "one missing", path: "/write", auth: tok(gjwt.MapClaims{"scope": "orders:read"}), status: 403, challenge: insufficient},
			{name: "no scopes", path: "/write", auth: tok(gjwt.MapClaims{"sub": "x"}), status: 403, challenge: insufficient},
			{name: "prefix is not a scope", path: "/read", auth: tok(gjwt.MapClaims{"scope": "orders:reader"}), status: 403,
				challenge: `Bearer error="insufficient_scope", scope="orders:read"`},
			{name: "without New", path: "/noauth", status: 401, challenge: "Bearer"},
		} {
			code, body, ch := get(t, client, "http://"+addr+tt.path, tt.auth)
			if code != tt.status || ch != tt.challenge {
				t.Errorf("%s %s: %d %q %q, want %d %q", proto, tt.name, code, body, ch, tt.status, tt.challenge)
			}
		}
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a scope with a space was accepted")
			}
		}()
		jwt.RequireScopes("a b")
	}()
}
