package jwt

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	gjwt "github.com/golang-jwt/jwt/v5"
)

// KeySet is a JSON Web Key Set (RFC 7517 §5) fetched from a URL (an identity
// provider's jwks_uri) and kept fresh:
//
//   - it is fetched again when older than RefreshInterval, in the background
//     (started by the first request that notices; requests keep using the keys
//     held meanwhile), and
//   - a token whose kid is not in the set triggers a fetch right away, so that a
//     provider's new signing key works from its first token (the first such
//     fetch too, however soon after the start); such fetches happen at most once
//     per MinRefreshInterval, so tokens with made-up kids cannot make the server
//     hammer the provider. Requests that wait for a fetch share it, and each
//     stops waiting when its own context ends (the client left, or a timeout
//     middleware's deadline passed: 503).
//
// A failed fetch keeps the keys held; a token whose kid a failed fetch could
// not find is answered 503 (ErrKeySetUnavailable), as is every token while a
// set made with StartWhenDown holds no key yet.
//
// Keys of kinds other than RSA, EC (P-256, P-384, P-521) and OKP Ed25519, and
// keys whose use is not "sig", are skipped. A key's alg, when given, is the only
// algorithm it verifies (RFC 7517 §4.4); otherwise its kty decides (RSA: RS and
// PS; EC: the ES of its curve; OKP: EdDSA).
// It is safe for concurrent use.
type KeySet struct {
	cfg KeySetConfig

	mu        sync.RWMutex
	keys      map[string]jwk // by kid
	anonymous []jwk          // keys without kid
	fetched   time.Time      // last successful fetch
	ttl       time.Duration  // how long that fetch stays fresh
	attempted time.Time      // last fetch attempt
	triggered time.Time      // last fetch for an unknown kid
	inflight  chan struct{}  // closed when the fetch under way ends; nil when none
	lastErr   error          // the last fetch's error

	fetchMu sync.Mutex // one fetch at a time
}

// KeySetConfig configures a KeySet. Zero values mean the defaults in brackets.
type KeySetConfig struct {
	// URL serves the key set as JSON.
	URL string
	// Client fetches it [an http.Client with a 10 s timeout].
	Client *http.Client
	// RefreshInterval is how long a fetched set is used before it is fetched
	// again; a shorter Cache-Control max-age in the answer (not below
	// MinRefreshInterval) takes its place [1 hour].
	RefreshInterval time.Duration
	// MinRefreshInterval bounds fetches triggered by unknown kids [1 minute].
	MinRefreshInterval time.Duration
	// MaxBytes bounds the size of the set read [1 MiB].
	MaxBytes int64
	// StartWhenDown makes NewKeySet return a usable set along with the error
	// of a first fetch that failed (the provider is down at start-up): tokens
	// are then answered 503 while the set holds no key, and requests fetch it
	// again, at most once per MinRefreshInterval, until it comes [false: no set
	// without a first fetch].
	StartWhenDown bool

	now func() time.Time // for tests
}

type jwk struct {
	key  any
	algs []string
}

// NewKeySet fetches the set once and returns it; an error means the first fetch
// failed or the set holds no usable key (with StartWhenDown, the set is
// returned with that error and usable).
func NewKeySet(ctx context.Context, cfg KeySetConfig) (*KeySet, error) {
	if cfg.URL == "" {
		return nil, errors.New("jwt: KeySetConfig.URL is empty")
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = time.Hour
	}
	if cfg.MinRefreshInterval <= 0 {
		cfg.MinRefreshInterval = time.Minute
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = 1 << 20
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	ks := &KeySet{cfg: cfg}
	if err := ks.Refresh(ctx); err != nil {
		if cfg.StartWhenDown {
			return ks, err
		}
		return nil, err
	}
	return ks, nil
}

// ParseKeySet returns a KeySet of a JWK Set document (RFC 7517 §5), which is
// never fetched again: for keys that come with the configuration.
func ParseKeySet(b []byte) (*KeySet, error) {
	keys, anon, err := parseJWKS(b)
	if err != nil {
		return nil, err
	}
	return &KeySet{cfg: KeySetConfig{now: time.Now}, keys: keys, anonymous: anon, ttl: time.Duration(1<<63 - 1)}, nil
}

// Refresh fetches the set now. On error the keys held are kept.
func (ks *KeySet) Refresh(ctx context.Context) error {
	if ks.cfg.URL == "" {
		return errors.New("jwt: the key set has no URL")
	}
	ks.fetchMu.Lock()
	defer ks.fetchMu.Unlock()
	return ks.fetch(ctx)
}

// fetch is Refresh with fetchMu held.
func (ks *KeySet) fetch(ctx context.Context) error {
	now := ks.cfg.now()
	ks.mu.Lock()
	ks.attempted = now
	ks.mu.Unlock()
	err := ks.get(ctx)
	ks.mu.Lock()
	ks.lastErr = err
	ks.mu.Unlock()
	return err
}

// get fetches and installs the set.
func (ks *KeySet) get(ctx context.Context) error {
	now := ks.cfg.now()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.cfg.URL, nil)
	if err != nil {
		return fmt.Errorf("jwt: key set: %w", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := ks.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("jwt: key set: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("jwt: key set: %s answered %s", ks.cfg.URL, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, ks.cfg.MaxBytes+1))
	if err != nil {
		return fmt.Errorf("jwt: key set: %w", err)
	}
	if int64(len(body)) > ks.cfg.MaxBytes {
		return fmt.Errorf("jwt: key set: larger than %d bytes", ks.cfg.MaxBytes)
	}
	keys, anon, err := parseJWKS(body)
	if err != nil {
		return err
	}
	ttl := ks.cfg.RefreshInterval
	if age, ok := maxAge(resp.Header.Get("Cache-Control")); ok {
		ttl = min(max(age, ks.cfg.MinRefreshInterval), ks.cfg.RefreshInterval)
	}
	ks.mu.Lock()
	ks.keys, ks.anonymous, ks.fetched, ks.ttl = keys, anon, now, ttl
	ks.mu.Unlock()
	return nil
}

// maxAge returns the max-age directive of a Cache-Control value (RFC 9111
// §5.2.2.1), ok false without one or with a malformed one.
func maxAge(cc string) (time.Duration, bool) {
	for d := range strings.SplitSeq(cc, ",") {
		name, v, _ := strings.Cut(strings.TrimSpace(d), "=")
		if !strings.EqualFold(name, "max-age") {
			continue
		}
		n, err := strconv.ParseInt(strings.Trim(v, `"`), 10, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		return time.Duration(min(n, 1<<31)) * time.Second, true
	}
	return 0, false
}

// Errors of the key set, which New answers with 503.
var (
	// ErrKeySetUnavailable: the set could not be fetched when a token needed
	// it (no key yet, or a failed fetch for an unknown kid), or the request
	// ended while it waited for the fetch.
	ErrKeySetUnavailable = errors.New("jwt: key set unavailable")
)

// errUnknownKid: the set does not hold the token's kid.
var errUnknownKid = errors.New("jwt: no key with the token's kid")

// Keyfunc returns the key for t (golang-jwt's Keyfunc): the key its kid names,
// or, for a token without kid, the only key without kid. A fetch it waits for
// (an unknown kid) ends with the Client's timeout; New waits only as long as
// the request's context.
func (ks *KeySet) Keyfunc(t *gjwt.Token) (any, error) { return ks.key(context.Background, t) }

// key is Keyfunc, waiting for a fetch no longer than the context ctx returns
// (called only then).
func (ks *KeySet) key(ctx func() context.Context, t *gjwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	alg, _ := t.Header["alg"].(string)
	now := ks.cfg.now()
	ks.mu.RLock()
	stale := now.Sub(ks.fetched) > ks.ttl
	empty := len(ks.keys)+len(ks.anonymous) == 0
	k, ok := ks.lookup(kid)
	canRefresh := now.Sub(ks.attempted) >= ks.cfg.MinRefreshInterval
	ks.mu.RUnlock()
	if ks.cfg.URL != "" {
		switch {
		case empty: // StartWhenDown, and no fetch succeeded yet: fetch behind the request
			if canRefresh {
				ks.startFetch(now, false)
			}
			return nil, ErrKeySetUnavailable
		case !ok: // a new key, maybe: fetch now (or join the fetch under way) and look again
			if done := ks.startFetch(now, true); done != nil {
				select {
				case <-done:
				case <-ctx().Done():
					return nil, fmt.Errorf("%w: %w", ErrKeySetUnavailable, ctx().Err())
				}
				ks.mu.RLock()
				k, ok = ks.lookup(kid)
				failed := ks.lastErr
				ks.mu.RUnlock()
				if !ok && failed != nil {
					return nil, fmt.Errorf("%w: %w", ErrKeySetUnavailable, failed)
				}
			}
		case stale && canRefresh:
			// The key is held: use it, and refresh behind the request.
			ks.startFetch(now, false)
		}
	}
	if !ok {
		return nil, fmt.Errorf("%w %q", errUnknownKid, kid)
	}
	if !slices.Contains(k.algs, alg) {
		return nil, fmt.Errorf("jwt: key %q does not verify alg %q", kid, alg)
	}
	return k.key, nil
}

// startFetch starts a fetch in the background unless one is under way, and
// returns a channel closed when the fetch under way ends. For an unknown kid
// (forKid), a new fetch starts only when the last such one is at least
// MinRefreshInterval old (or there was none); nil means none is under way and
// none may start. The fetch is bounded by the Client's timeout, not by the
// request that started it.
func (ks *KeySet) startFetch(now time.Time, forKid bool) <-chan struct{} {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.inflight != nil {
		return ks.inflight
	}
	if forKid {
		if !ks.triggered.IsZero() && now.Sub(ks.triggered) < ks.cfg.MinRefreshInterval {
			return nil
		}
		ks.triggered = now
	}
	done := make(chan struct{})
	ks.inflight = done
	go func() {
		ks.fetchMu.Lock()
		_ = ks.fetch(context.Background()) // old keys stay on error
		ks.fetchMu.Unlock()
		ks.mu.Lock()
		ks.inflight = nil
		ks.mu.Unlock()
		close(done)
	}()
	return done
}

// lookup is called with mu held.
func (ks *KeySet) lookup(kid string) (jwk, bool) {
	if kid != "" {
		k, ok := ks.keys[kid]
		return k, ok
	}
	if len(ks.anonymous) == 1 {
		return ks.anonymous[0], true
	}
	return jwk{}, false
}

// Len returns the number of usable keys held.
func (ks *KeySet) Len() int {
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	return len(ks.keys) + len(ks.anonymous)
}

// rawJWK is RFC 7517 §4's members, with RFC 7518 §6's parameters.
type rawJWK struct {
	Kty string `json:"kty"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Kid string `json:"kid"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS parses a JWK Set (RFC 7517 §5) into public keys by kid, and those
// without kid. Unusable keys (unknown kty or curve, use other than "sig", private
// or symmetric material, malformed numbers) are skipped; an error means the
// document is not a key set or holds no usable key.
func parseJWKS(b []byte) (byKid map[string]jwk, anonymous []jwk, err error) {
	var set struct {
		Keys []rawJWK `json:"keys"`
	}
	if err := json.Unmarshal(b, &set); err != nil {
		return nil, nil, fmt.Errorf("jwt: key set: %w", err)
	}
	byKid = make(map[string]jwk)
	for _, r := range set.Keys {
		if r.Use != "" && r.Use != "sig" {
			continue
		}
		k, ok := parseJWK(r)
		if !ok {
			continue
		}
		if r.Kid == "" {
			anonymous = append(anonymous, k)
		} else {
			byKid[r.Kid] = k
		}
	}
	if len(byKid)+len(anonymous) == 0 {
		return nil, nil, errors.New("jwt: key set holds no usable signing key")
	}
	return byKid, anonymous, nil
}

func parseJWK(r rawJWK) (jwk, bool) {
	var k jwk
	switch r.Kty {
	case "RSA": // RFC 7518 §6.3.1
		n, ok1 := b64int(r.N)
		e, ok2 := b64int(r.E)
		if !ok1 || !ok2 || n.BitLen() < 2048 || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 || e.Bit(0) == 0 {
			return k, false // RFC 7518 §3.3: keys of 2048 bits or more
		}
		k = jwk{key: &rsa.PublicKey{N: n, E: int(e.Int64())}, algs: rsaAlgs}
	case "EC": // RFC 7518 §6.2.1
		var curve elliptic.Curve
		var alg string
		switch r.Crv {
		case "P-256":
			curve, alg = elliptic.P256(), "ES256"
		case "P-384":
			curve, alg = elliptic.P384(), "ES384"
		case "P-521":
			curve, alg = elliptic.P521(), "ES512"
		default:
			return k, false
		}
		x, err1 := base64.RawURLEncoding.DecodeString(r.X)
		y, err2 := base64.RawURLEncoding.DecodeString(r.Y)
		size := (curve.Params().BitSize + 7) / 8
		if err1 != nil || err2 != nil || len(x) != size || len(y) != size {
			return k, false
		}
		// ParseUncompressedPublicKey checks that the point is on the curve.
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, x...), y...))
		if err != nil {
			return k, false
		}
		k = jwk{key: pub, algs: []string{alg}}
	case "OKP": // RFC 8037 §2
		x, err := base64.RawURLEncoding.DecodeString(r.X)
		if r.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return k, false
		}
		k = jwk{key: ed25519.PublicKey(x), algs: eddsaAlgs}
	default:
		return k, false
	}
	if r.Alg != "" {
		if !slices.Contains(k.algs, r.Alg) {
			return k, false
		}
		k.algs = []string{r.Alg}
	}
	return k, true
}

// b64int decodes a Base64urlUInt (RFC 7518 §2).
func b64int(s string) (*big.Int, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, false
	}
	return new(big.Int).SetBytes(b), true
}
