// Package jwt authenticates requests by JSON Web Token (RFC 7519), verified with
// github.com/golang-jwt/jwt/v5.
//
// The token is read from "Authorization: Bearer <token>" (RFC 6750 §2.1) or from
// where Config.Lookup says, and verified with one key (Config.Key: an HMAC secret
// for HS256/384/512, an *rsa.PublicKey for RS and PS, an *ecdsa.PublicKey for ES,
// an ed25519.PublicKey for EdDSA), with a key set (Config.KeySet: a JWKS, RFC
// 7517, fetched from a URL and refreshed, picked by the token's kid), or both:
// the set verifies tokens with a kid, and Key those without one or with a kid
// the set does not hold (a service's own HS256 tokens beside an identity
// provider's). The accepted
// algorithms follow from the key's type, or are Config.Algorithms: a token's alg
// header never chooses the kind of key (the "alg: none" and HMAC-with-a-public-key
// attacks of RFC 8725 §2.1 are refused).
//
// Expiry (exp) and not-before (nbf) are checked when present, with Config.Leeway;
// Config.Issuer, Config.Audience and Config.RequireExpiry add checks. The verified
// token and its claims go into the Context (Token, Claims, Subject); the subject is
// also stored under SubjectKey, so ratelimit.ByContextValue(jwt.SubjectKey) limits
// per user. New also stores an auth.Principal (package
// github.com/celeris-dev/celeris/middleware/auth), and Authenticator makes the
// same check one of auth.Any's, beside sessions and API keys. RequireScopes,
// after New or auth.Any, checks the principal's scopes, for a token or any other
// credential (403 insufficient_scope).
//
// A request without a token gets 401 with
//
//	WWW-Authenticate: Bearer realm="<Realm>"
//
// and one with a bad token (malformed, wrong signature, expired, wrong issuer,
// an alg refused...) 401 with error="invalid_token" and an error_description
// (RFC 6750 §3 and §3.1), through the server's error handler. A key set that
// cannot be fetched when a token needs it is a 503 (ErrKeySetUnavailable).
//
// The module github.com/celeris-dev/celeris/jwt keeps golang-jwt out of the core
// module's requirements.
package jwt

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/auth"
	gjwt "github.com/golang-jwt/jwt/v5"
)

// Aliases of golang-jwt's types, so that handlers need not import it.
type (
	// Claims is the interface of every claims type.
	Claims = gjwt.Claims
	// MapClaims are claims as a JSON object (the default).
	MapClaims = gjwt.MapClaims
	// RegisteredClaims are RFC 7519 §4.1's claims, to embed in a struct.
	RegisteredClaims = gjwt.RegisteredClaims
	// Token is a parsed, verified token.
	Token = gjwt.Token
)

// Config configures the middleware. Key, KeySet (or both), or Keyfunc must be set.
// Zero values mean the defaults in brackets.
type Config struct {
	// Key verifies every token: []byte (HMAC), *rsa.PublicKey, *ecdsa.PublicKey
	// or ed25519.PublicKey.
	Key any
	// KeySet verifies tokens with the key their kid names (a JWKS); with Key
	// too, Key verifies tokens without kid and those whose kid the set lacks.
	KeySet *KeySet
	// Keyfunc returns the key for a token, for anything else (golang-jwt's
	// Keyfunc). Algorithms must be set with it.
	Keyfunc gjwt.Keyfunc
	// Algorithms are the accepted alg values [by Key's type: HS256, HS384, HS512
	// for []byte; RS256/384/512 and PS256/384/512 for RSA; ES256/384/512 for ECDSA;
	// EdDSA for Ed25519; for a KeySet, each JWK's alg or what its kty allows].
	Algorithms []string
	// Issuer, when set, must equal the iss claim.
	Issuer string
	// Audience, when set, must be one of the aud claim's values.
	Audience string
	// RequireExpiry refuses tokens without exp [false].
	RequireExpiry bool
	// Leeway is the clock skew allowed for exp, nbf and iat [0].
	Leeway time.Duration
	// NewClaims returns the value a token's claims are decoded into, for a claims
	// struct embedding RegisteredClaims [MapClaims].
	NewClaims func() Claims
	// Lookup says where the token is: "auth:<Scheme>", "header:<Name>",
	// "query:<name>" or "cookie:<name>" ["auth:Bearer"].
	Lookup string
	// Realm names the protection space in the challenge ["Restricted"].
	Realm string
	// Skip lets a request through unchecked when it returns true [none].
	Skip func(c *celeris.Context) bool

	now func() time.Time // for tests
}

// Context keys of the verified token, its claims and its subject.
const (
	TokenKey   = "jwt.token"
	ClaimsKey  = "jwt.claims"
	SubjectKey = "jwt.sub"
)

// maxToken bounds the length of a token looked at.
const maxToken = 8192

// verifier checks a request's token as Config says.
type verifier struct {
	cfg       Config
	extract   func(c *celeris.Context) string
	parser    *gjwt.Parser
	algs      []string
	keyAlgs   []string // the algorithms Config.Key verifies
	challenge string
	missing   *celeris.HTTPError
}

// newVerifier applies Config's defaults; it panics as New documents.
func newVerifier(cfg Config) *verifier {
	v := &verifier{algs: cfg.Algorithms}
	if cfg.Key != nil {
		v.keyAlgs = algorithmsFor(cfg.Key)
		if v.keyAlgs == nil {
			panic("jwt: Config.Key must be []byte, *rsa.PublicKey, *ecdsa.PublicKey or ed25519.PublicKey")
		}
	}
	switch {
	case cfg.Keyfunc != nil:
		if len(v.algs) == 0 {
			// Without a list any alg the token names would be tried with the
			// key Keyfunc returns (RFC 8725 §3.1: use an allowlist).
			panic("jwt: Config.Keyfunc needs Config.Algorithms")
		}
	case cfg.KeySet != nil:
		if len(v.algs) == 0 {
			v.algs = allAlgorithms
			if cfg.Key != nil {
				v.algs = append(slices.Clip(v.keyAlgs), allAlgorithms...)
			}
		}
	case cfg.Key != nil:
		if len(v.algs) == 0 {
			v.algs = v.keyAlgs
		}
	default:
		panic("jwt: Config needs Key, KeySet or Keyfunc")
	}
	if cfg.Realm == "" {
		cfg.Realm = "Restricted"
	}
	if cfg.Lookup == "" {
		cfg.Lookup = "auth:Bearer"
	}
	if cfg.NewClaims == nil {
		cfg.NewClaims = func() Claims { return MapClaims{} }
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	v.cfg = cfg
	v.extract = extractor(cfg.Lookup)
	opts := []gjwt.ParserOption{gjwt.WithValidMethods(v.algs), gjwt.WithLeeway(cfg.Leeway), gjwt.WithTimeFunc(cfg.now)}
	if cfg.Issuer != "" {
		opts = append(opts, gjwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, gjwt.WithAudience(cfg.Audience))
	}
	if cfg.RequireExpiry {
		opts = append(opts, gjwt.WithExpirationRequired())
	}
	v.parser = gjwt.NewParser(opts...)
	v.challenge = "Bearer realm=" + quote(cfg.Realm)
	v.missing = celeris.NewHTTPError(http.StatusUnauthorized, "missing bearer token")
	return v
}

// keyfunc returns the key for a token: Keyfunc's; with a KeySet, the key its
// kid names (a fetch is waited for at most until the request's context ends),
// and Key for a token without kid or one the set does not hold; else Key.
func (v *verifier) keyfunc(c *celeris.Context) gjwt.Keyfunc {
	switch {
	case v.cfg.Keyfunc != nil:
		return v.cfg.Keyfunc
	case v.cfg.KeySet == nil:
		return v.staticKey
	}
	return func(t *gjwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		if v.cfg.Key == nil || kid != "" {
			// c.Context is asked for only when a fetch is waited for: it is
			// made on first use.
			k, err := v.cfg.KeySet.key(c.Context, t)
			if err == nil || v.cfg.Key == nil || !errors.Is(err, errUnknownKid) {
				return k, err
			}
		}
		return v.staticKey(t)
	}
}

// staticKey is the Keyfunc of Config.Key.
func (v *verifier) staticKey(t *gjwt.Token) (any, error) {
	alg, _ := t.Header["alg"].(string)
	if !slices.Contains(v.keyAlgs, alg) {
		return nil, fmt.Errorf("jwt: Config.Key does not verify alg %q", alg)
	}
	return v.cfg.Key, nil
}

// verify returns the request's verified token. present is false when the
// request carries none; err is then v.missing, else an answer for a bad token
// (401 invalid_token) or a key set that is down (503). The challenge is set.
func (v *verifier) verify(c *celeris.Context) (tok *gjwt.Token, present bool, err error) {
	raw := v.extract(c)
	if raw == "" {
		// RFC 6750 §3.1: no error code when the request had no token.
		c.SetHeader("WWW-Authenticate", v.challenge)
		return nil, false, v.missing
	}
	if len(raw) > maxToken {
		err = gjwt.ErrTokenMalformed
	} else {
		tok, err = v.parser.ParseWithClaims(raw, v.cfg.NewClaims(), v.keyfunc(c))
	}
	if err != nil {
		if errors.Is(err, ErrKeySetUnavailable) {
			return nil, true, &celeris.DependencyError{Name: "jwt key set", Err: err}
		}
		desc := v.describe(raw, err)
		c.SetHeader("WWW-Authenticate", v.challenge+`, error="invalid_token", error_description="`+desc+`"`)
		return nil, true, &celeris.HTTPError{Code: http.StatusUnauthorized, Message: "invalid token: " + desc, Err: err}
	}
	return tok, true, nil
}

// principal is the auth.Principal of a verified token.
func principal(tok *gjwt.Token) *auth.Principal {
	p := &auth.Principal{Kind: auth.KindJWT, Scopes: Scopes(tok.Claims)}
	p.ID, _ = tok.Claims.GetSubject()
	if mc, ok := tok.Claims.(MapClaims); ok {
		p.Claims = mc
	}
	return p
}

// New returns the middleware. It panics when no key source is set, when Keyfunc
// comes without Algorithms, or when Lookup is malformed. It stores the token's
// auth.Principal too (Kind auth.KindJWT, ID the subject, the token's scopes, and
// its claims when they are MapClaims), for auth.RequireScopes and auth.Require.
func New(cfg Config) celeris.MiddlewareFunc {
	v := newVerifier(cfg)
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if cfg.Skip != nil && cfg.Skip(c) {
				return next(c)
			}
			tok, _, err := v.verify(c)
			if err != nil {
				return err
			}
			store(c, tok)
			return next(c)
		}
	}
}

// store puts a verified token into the Context.
func store(c *celeris.Context, tok *gjwt.Token) {
	c.Set(TokenKey, tok)
	c.Set(ClaimsKey, tok.Claims)
	if sub, err := tok.Claims.GetSubject(); err == nil && sub != "" {
		c.Set(SubjectKey, sub)
	}
	auth.Set(c, principal(tok))
}

// Authenticator returns an auth.Authenticator (for auth.Any) that verifies
// tokens as New(cfg) does, with its answers and challenge, and stores the
// token in the Context as New does. cfg.Skip is ignored.
func Authenticator(cfg Config) auth.Authenticator {
	v := newVerifier(cfg)
	return auth.Authenticator{Kind: auth.KindJWT, Authenticate: func(c *celeris.Context) (*auth.Principal, error) {
		tok, present, err := v.verify(c)
		if !present {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		store(c, tok)
		return auth.From(c), nil
	}}
}

// describe names what is wrong with a token, in the characters RFC 6750 §3
// allows in error_description.
func (v *verifier) describe(raw string, err error) string {
	if t, _, perr := v.parser.ParseUnverified(raw, MapClaims{}); perr == nil {
		// An alg outside the accepted list ("none" above all) is refused as
		// such, whatever error the parser reports for it.
		if alg, _ := t.Header["alg"].(string); !slices.Contains(v.algs, alg) {
			if alg != "" && len(alg) <= 16 && strings.Trim(alg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") == "" {
				return "alg " + alg + " refused"
			}
			return "alg refused"
		}
	}
	switch {
	case errors.Is(err, gjwt.ErrTokenMalformed):
		return "malformed token"
	case errors.Is(err, gjwt.ErrTokenSignatureInvalid):
		return "signature invalid"
	case errors.Is(err, gjwt.ErrTokenUnverifiable):
		return "no key verifies the token"
	case errors.Is(err, gjwt.ErrTokenExpired):
		return "token expired"
	case errors.Is(err, gjwt.ErrTokenNotValidYet):
		return "token not valid yet"
	case errors.Is(err, gjwt.ErrTokenUsedBeforeIssued):
		return "token used before issued"
	case errors.Is(err, gjwt.ErrTokenInvalidIssuer):
		return "wrong issuer"
	case errors.Is(err, gjwt.ErrTokenInvalidAudience):
		return "wrong audience"
	case errors.Is(err, gjwt.ErrTokenRequiredClaimMissing):
		return "required claim missing"
	}
	return "invalid token"
}

// GetToken returns the request's verified token, nil when there is none.
func GetToken(c *celeris.Context) *Token {
	v, _ := c.Get(TokenKey)
	t, _ := v.(*Token)
	return t
}

// GetClaims returns the request's verified claims (MapClaims unless
// Config.NewClaims says otherwise), nil when there are none.
func GetClaims(c *celeris.Context) Claims {
	v, _ := c.Get(ClaimsKey)
	cl, _ := v.(Claims)
	return cl
}

// Subject returns the verified token's sub claim, "" when there is none.
func Subject(c *celeris.Context) string {
	v, _ := c.Get(SubjectKey)
	s, _ := v.(string)
	return s
}

var (
	hmacAlgs      = []string{"HS256", "HS384", "HS512"}
	rsaAlgs       = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}
	ecdsaAlgs     = []string{"ES256", "ES384", "ES512"}
	eddsaAlgs     = []string{"EdDSA"}
	allAlgorithms = append(append(append([]string{}, rsaAlgs...), ecdsaAlgs...), eddsaAlgs...)
)

// algorithmsFor returns the algorithms that a key of key's type verifies, nil for
// an unsupported type.
func algorithmsFor(key any) []string {
	switch key.(type) {
	case []byte:
		return hmacAlgs
	case *rsa.PublicKey:
		return rsaAlgs
	case *ecdsa.PublicKey:
		return ecdsaAlgs
	case ed25519.PublicKey:
		return eddsaAlgs
	}
	return nil
}

func extractor(lookup string) func(c *celeris.Context) string {
	where, name, ok := strings.Cut(lookup, ":")
	if !ok || name == "" {
		panic("jwt: malformed Lookup " + lookup)
	}
	switch where {
	case "auth":
		return func(c *celeris.Context) string {
			h := c.Header("Authorization")
			// RFC 9110 §11.1: the scheme is case-insensitive.
			if len(h) <= len(name) || h[len(name)] != ' ' || !strings.EqualFold(h[:len(name)], name) {
				return ""
			}
			return strings.Trim(h[len(name):], " ")
		}
	case "header":
		return func(c *celeris.Context) string { return c.Header(name) }
	case "query":
		return func(c *celeris.Context) string { return c.Query(name) }
	case "cookie":
		return func(c *celeris.Context) string { v, _ := c.Cookie(name); return v }
	}
	panic("jwt: Lookup source must be auth, header, query or cookie: " + lookup)
}

// quote makes a quoted-string (RFC 9110 §5.6.4), escaping '"' and '\'.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
