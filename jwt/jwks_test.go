package jwt_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/jwt"
	gjwt "github.com/golang-jwt/jwt/v5"
)

var b64 = base64.RawURLEncoding

func rsaJWK(kid string, k *rsa.PublicKey) map[string]any {
	return map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "n": b64.EncodeToString(k.N.Bytes()),
		"e": b64.EncodeToString(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(kid string, k *ecdsa.PublicKey) map[string]any {
	raw, _ := k.Bytes() // 0x04 || X || Y
	size := (len(raw) - 1) / 2
	return map[string]any{"kty": "EC", "kid": kid, "crv": "P-256", "alg": "ES256",
		"x": b64.EncodeToString(raw[1 : 1+size]), "y": b64.EncodeToString(raw[1+size:])}
}

func edJWK(kid string, k ed25519.PublicKey) map[string]any {
	return map[string]any{"kty": "OKP", "kid": kid, "crv": "Ed25519", "x": b64.EncodeToString(k)}
}

// jwksServer serves a key set that the test replaces, and counts fetches.
type jwksServer struct {
	mu           sync.Mutex
	keys         []map[string]any
	fetches      atomic.Int32
	fail         atomic.Bool
	cacheControl string
}

func (s *jwksServer) set(keys ...map[string]any) {
	s.mu.Lock()
	s.keys = keys
	s.mu.Unlock()
}

func (s *jwksServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.fetches.Add(1)
	if s.fail.Load() {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	s.mu.Lock()
	b, _ := json.Marshal(map[string]any{"keys": s.keys})
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/jwk-set+json")
	if s.cacheControl != "" {
		w.Header().Set("Cache-Control", s.cacheControl)
	}
	_, _ = w.Write(b)
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A JWKS over a real socket: RS256, ES256 and EdDSA keys picked by kid; a key
// the provider adds later is fetched on its first token (unknown kid), such
// fetches are rate-limited, a retired key stops working after the refresh, and a
// failing provider leaves the held keys in place.
func TestKeySetRotation(t *testing.T) {
	k := getKeys(t)
	ec2, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	provider := &jwksServer{}
	provider.set(rsaJWK("rsa-1", &k.rsa.PublicKey), ecJWK("ec-1", &k.ec.PublicKey), edJWK("ed-1", k.ed.Public().(ed25519.PublicKey)))
	ts := httptest.NewServer(provider)
	defer ts.Close()
	clk := &fakeClock{t: time.Now()}
	ks, err := jwt.NewKeySet(context.Background(), jwt.KeySetWithClock(jwt.KeySetConfig{URL: ts.URL, RefreshInterval: time.Hour, MinRefreshInterval: time.Minute}, clk.now))
	if err != nil {
		t.Fatal(err)
	}
	if ks.Len() != 3 {
		t.Fatalf("keys %d", ks.Len())
	}
	url := start(t, celeris.Config{}, jwt.New(jwt.Config{KeySet: ks}))
	client := clients(t)["h2c"]
	claims := gjwt.MapClaims{"sub": "bob", "role": "dev", "exp": time.Now().Add(24 * time.Hour).Unix()}
	tok := func(m gjwt.SigningMethod, key any, kid string) string {
		return "Bearer " + sign(t, m, key, claims, map[string]any{"kid": kid})
	}
	expect := func(name, auth string, status int, fetches int32) {
		t.Helper()
		code, body, ch := get(t, client, url, auth)
		if code != status || provider.fetches.Load() != fetches {
			t.Errorf("%s: %d %q %q, fetches %d, want %d and %d", name, code, body, ch, provider.fetches.Load(), status, fetches)
		}
	}
	expect("RS256 rsa-1", tok(gjwt.SigningMethodRS256, k.rsa, "rsa-1"), 200, 1)
	expect("ES256 ec-1", tok(gjwt.SigningMethodES256, k.ec, "ec-1"), 200, 1)
	expect("EdDSA ed-1", tok(gjwt.SigningMethodEdDSA, k.ed, "ed-1"), 200, 1)
	expect("ES256 under the RSA kid", tok(gjwt.SigningMethodES256, k.ec, "rsa-1"), 401, 1)
	expect("ES384 on a key whose alg is ES256", tok(gjwt.SigningMethodES256, ec2, "ec-1"), 401, 1)

	// The provider adds ec-2: its first token triggers a fetch (more than
	// MinRefreshInterval after the last one).
	clk.advance(2 * time.Minute)
	provider.set(rsaJWK("rsa-1", &k.rsa.PublicKey), ecJWK("ec-2", &ec2.PublicKey))
	expect("new kid ec-2", tok(gjwt.SigningMethodES256, ec2, "ec-2"), 200, 2)
	// Unknown kids within MinRefreshInterval do not fetch again.
	for range 5 {
		expect("made-up kid", tok(gjwt.SigningMethodES256, ec2, "nope"), 401, 2)
	}
	// ec-1 was retired by that fetch.
	expect("retired ec-1", tok(gjwt.SigningMethodES256, k.ec, "ec-1"), 401, 2)
	clk.advance(2 * time.Minute)
	expect("made-up kid after MinRefreshInterval", tok(gjwt.SigningMethodES256, ec2, "nope"), 401, 3)

	// The provider fails: the keys held keep working, even when stale.
	provider.fail.Store(true)
	clk.advance(2 * time.Hour)
	// A stale set is refreshed behind the request, which the held key serves.
	if code, _, _ := get(t, client, url, tok(gjwt.SigningMethodRS256, k.rsa, "rsa-1")); code != 200 {
		t.Errorf("stale set, provider down: %d", code)
	}
	for deadline := time.Now().Add(5 * time.Second); provider.fetches.Load() != 4 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	expect("within MinRefreshInterval of the failure", tok(gjwt.SigningMethodRS256, k.rsa, "rsa-1"), 200, 4)
}

func TestParseJWKS(t *testing.T) {
	k := getKeys(t)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	good := rsaJWK("a", &k.rsa.PublicKey)
	enc := rsaJWK("b", &k.rsa.PublicKey)
	enc["use"] = "enc"
	badAlg := ecJWK("c", &k.ec.PublicKey)
	badAlg["alg"] = "RS256"
	offCurve := ecJWK("d", &k.ec.PublicKey)
	offCurve["y"] = offCurve["x"]
	for _, tt := range []struct {
		name string
		doc  any
		n    int
		err  bool
	}{
		{name: "one", doc: map[string]any{"keys": []any{good}}, n: 1},
		{name: "skips enc, bad alg, off-curve, small RSA, oct, unknown", n: 1, doc: map[string]any{"keys": []any{good, enc, badAlg, offCurve,
			rsaJWK("e", &small.PublicKey), map[string]any{"kty": "oct", "k": "c2VjcmV0"}, map[string]any{"kty": "XYZ"}}}},
		{name: "no usable key", doc: map[string]any{"keys": []any{enc}}, err: true},
		{name: "empty", doc: map[string]any{"keys": []any{}}, err: true},
		{name: "not a set", doc: []int{1}, err: true},
	} {
		b, _ := json.Marshal(tt.doc)
		n, err := jwt.ParseJWKSCount(b)
		if n != tt.n || (err != nil) != tt.err {
			t.Errorf("%s: %d keys, %v", tt.name, n, err)
		}
	}
	if _, err := jwt.NewKeySet(context.Background(), jwt.KeySetConfig{URL: "http://127.0.0.1:1/jwks"}); err == nil {
		t.Error("NewKeySet of an unreachable URL succeeded")
	}
}

func FuzzParseJWKS(f *testing.F) {
	k := getKeys(f)
	b, _ := json.Marshal(map[string]any{"keys": []any{rsaJWK("a", &k.rsa.PublicKey), ecJWK("b", &k.ec.PublicKey),
		edJWK("c", k.ed.Public().(ed25519.PublicKey))}})
	f.Add(b)
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"","y":""}]}`))
	f.Add([]byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AAAAAAAAAAAAAAAAAAAAAQ"}]}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		_, _ = jwt.ParseJWKSCount(doc)
		_, _ = jwt.ParseKeySet(doc)
	})
}

func TestMaxAge(t *testing.T) {
	for _, tt := range []struct {
		cc   string
		want time.Duration
		ok   bool
	}{
		{cc: "public, max-age=300", want: 300 * time.Second, ok: true},
		{cc: "MAX-AGE=\"60\"", want: time.Minute, ok: true},
		{cc: "no-cache"},
		{cc: "max-age=-1"},
		{cc: "max-age=abc"},
		{cc: ""},
	} {
		if got, ok := jwt.MaxAge(tt.cc); got != tt.want || ok != tt.ok {
			t.Errorf("maxAge(%q) = %v %v, want %v %v", tt.cc, got, ok, tt.want, tt.ok)
		}
	}
}

// The provider's Cache-Control max-age shortens RefreshInterval: a known kid
// past max-age starts a background refresh.
func TestKeySetMaxAge(t *testing.T) {
	k := getKeys(t)
	provider := &jwksServer{cacheControl: "public, max-age=120"}
	provider.set(rsaJWK("rsa-1", &k.rsa.PublicKey))
	ts := httptest.NewServer(provider)
	defer ts.Close()
	clk := &fakeClock{t: time.Now()}
	ks, err := jwt.NewKeySet(context.Background(), jwt.KeySetWithClock(jwt.KeySetConfig{URL: ts.URL}, clk.now))
	if err != nil {
		t.Fatal(err)
	}
	url := start(t, celeris.Config{}, jwt.New(jwt.Config{KeySet: ks}))
	auth := "Bearer " + sign(t, gjwt.SigningMethodRS256, k.rsa, gjwt.MapClaims{"sub": "x"}, map[string]any{"kid": "rsa-1"})
	client := clients(t)["h1"]
	clk.advance(90 * time.Second)
	if code, _, _ := get(t, client, url, auth); code != 200 || provider.fetches.Load() != 1 {
		t.Fatalf("fresh: %d, %d fetches", code, provider.fetches.Load())
	}
	clk.advance(60 * time.Second)
	if code, _, _ := get(t, client, url, auth); code != 200 {
		t.Fatalf("stale: %d", code)
	}
	for deadline := time.Now().Add(5 * time.Second); provider.fetches.Load() != 2 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if n := provider.fetches.Load(); n != 2 {
		t.Errorf("%d fetches after max-age, want 2", n)
	}
}

func FuzzMaxAge(f *testing.F) {
	f.Add("public, max-age=300")
	f.Add(`max-age="1"`)
	f.Add("max-age=99999999999999999999")
	f.Fuzz(func(t *testing.T, cc string) {
		if d, ok := jwt.MaxAge(cc); ok && (d < 0 || d > (1<<31)*time.Second) {
			t.Fatalf("maxAge(%q) = %v", cc, d)
		}
	})
}
