// Package csrf protects against cross-site request forgery.
//
// The check is the one Go 1.25's http.CrossOriginProtection makes, which needs no
// token, no session and no form changes: browsers say where a request comes from,
// and a request that changes state from another origin is refused. For a request
// whose method is not safe (RFC 9110 §9.2.1: anything but GET, HEAD and OPTIONS):
//
//  1. Sec-Fetch-Site (Fetch Metadata, sent by every browser since 2023):
//     "same-origin" or "none" (typed in the address bar, a bookmark) passes; any
//     other value ("same-site", "cross-site") passes only when Origin is a trusted
//     origin, else 403.
//  2. Without Sec-Fetch-Site, Origin (RFC 6454 §7, sent by browsers on every
//     non-GET fetch since about 2020): it passes when its host equals the
//     request's Host, or when it is a trusted origin; otherwise 403.
//  3. With neither header the request did not come from a browser (curl, a
//     server-side client, a mobile app) or came from a very old one. It passes,
//     as with http.CrossOriginProtection, unless Config.Token is set: then it
//     must carry the CSRF token (below).
//
// Token mode is the double-submit cookie: the middleware keeps a random 256-bit
// token in a cookie (issued on the first request that has none) and Token returns
// it, for a hidden form field or a header set by scripts (the cookie is HttpOnly:
// put the token in the page, e.g. a <meta> element, for scripts to read). An
// unsafe request in case 3 must send it back in the X-CSRF-Token header or the
// csrf_token form field, and it is compared with the cookie in constant time. A
// cross-site attacker can make a browser send the cookie but cannot read it, so
// cannot echo it. Serve the site over HTTPS and keep the default cookie name's
// __Host- prefix (RFC 6265bis §4.1.3.2: Secure, Path=/, no Domain) so that a
// sibling subdomain cannot plant a cookie of its own.
//
// Pages rendered by celeris.HTMLTemplates call {{csrfField}} for the hidden
// input (<input type="hidden" name="csrf_token" value="...">, "" outside token
// mode) and {{csrfToken}} for the token alone (a <meta> element for scripts),
// without the handler passing the token in its data.
//
// Refused requests get 403 Forbidden through the server's error handler.
package csrf

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"html"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// TrustedOrigins are origins ("https://app.example.com", scheme://host[:port]
	// with nothing after) from which cross-origin unsafe requests are allowed.
	// New panics on a malformed one. [none]
	TrustedOrigins []string
	// Token turns on token mode for requests that carry neither Sec-Fetch-Site nor
	// Origin [false: such requests pass].
	Token bool
	// CookieName is the token cookie's name ["__Host-csrf" when the request is
	// HTTPS, "csrf" otherwise; a __Host- cookie must be Secure].
	CookieName string
	// HeaderName is the request header carrying the token ["X-CSRF-Token"].
	HeaderName string
	// FormField is the form field carrying the token ["csrf_token"].
	FormField string
	// SameSite of the token cookie [http.SameSiteLaxMode].
	SameSite http.SameSite
	// Skip lets a request through unchecked when it returns true (a webhook
	// endpoint that authenticates by signature) [none].
	Skip func(c *celeris.Context) bool
}

// TokenKey is the Context key of the request's token (token mode).
const TokenKey = "csrf.token"

// fieldKey is the Context key of Config.FormField, for csrfField.
const fieldKey = "csrf.field"

func init() {
	celeris.RegisterTemplateFunc("csrfToken", func(c *celeris.Context) any { return Token(c) })
	celeris.RegisterTemplateFunc("csrfField", func(c *celeris.Context) any { return Field(c) })
}

// Field returns the hidden form input carrying the request's token, "" outside
// token mode: <input type="hidden" name="csrf_token" value="...">, with
// Config.FormField as the name. Templates rendered by celeris.HTMLTemplates call
// it as {{csrfField}}.
func Field(c *celeris.Context) template.HTML {
	token := Token(c)
	if token == "" {
		return ""
	}
	name, _ := c.Get(fieldKey)
	field, _ := name.(string)
	// The token is base64url: nothing in it needs escaping.
	return template.HTML(`<input type="hidden" name="` + html.EscapeString(field) + `" value="` + token + `">`)
}

// Errors of a refused request, answered as 403 by the server's error handler.
var (
	// ErrCrossOrigin refuses an unsafe request that a browser marked cross-origin.
	ErrCrossOrigin = celeris.NewHTTPError(http.StatusForbidden, "cross-origin request refused")
	// ErrToken refuses an unsafe request without browser headers whose token is
	// missing or does not match the cookie.
	ErrToken = celeris.NewHTTPError(http.StatusForbidden, "missing or invalid CSRF token")
)

// tokenBytes is the token's entropy; its base64url form is 43 characters.
const tokenBytes = 32

// New returns the middleware. It panics on a malformed trusted origin.
func New(cfg Config) celeris.MiddlewareFunc {
	trusted := make(map[string]bool, len(cfg.TrustedOrigins))
	for _, o := range cfg.TrustedOrigins {
		u, err := url.Parse(o)
		if err != nil || u.Scheme == "" || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			panic("csrf: TrustedOrigins: " + o + " is not scheme://host[:port]")
		}
		trusted[o] = true
	}
	if cfg.HeaderName == "" {
		cfg.HeaderName = "X-CSRF-Token"
	}
	if cfg.FormField == "" {
		cfg.FormField = "csrf_token"
	}
	if cfg.SameSite == 0 {
		cfg.SameSite = http.SameSiteLaxMode
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if cfg.Skip != nil && cfg.Skip(c) {
				return next(c)
			}
			var token string
			var hadCookie bool
			if cfg.Token {
				token, hadCookie = cfg.issue(c)
				c.Set(fieldKey, cfg.FormField)
			}
			switch Check(c.Method(), c.Host(), c.Header("Sec-Fetch-Site"), c.Header("Origin"), trusted) {
			case Allowed:
				return next(c)
			case CrossOrigin:
				return ErrCrossOrigin
			}
			// Unknown: no browser headers.
			if !cfg.Token {
				return next(c)
			}
			sent := c.Header(cfg.HeaderName)
			if sent == "" {
				sent = c.FormValue(cfg.FormField)
			}
			if sent == "" || len(sent) != len(token) || subtle.ConstantTimeCompare([]byte(sent), []byte(token)) != 1 || !hadCookie {
				return ErrToken
			}
			return next(c)
		}
	}
}

// Verdict is the outcome of Check.
type Verdict int

const (
	// Allowed: a safe method, or a same-origin or trusted browser request.
	Allowed Verdict = iota
	// CrossOrigin: a browser said the request is cross-origin and the origin is
	// not trusted.
	CrossOrigin
	// Unknown: neither Sec-Fetch-Site nor Origin; not from a browser, or from
	// one too old to say.
	Unknown
)

// Check classifies a request as http.CrossOriginProtection does, from its method,
// Host, Sec-Fetch-Site and Origin values; trusted holds the trusted origins.
func Check(method, host, secFetchSite, origin string, trusted map[string]bool) Verdict {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return Allowed
	}
	switch secFetchSite {
	case "same-origin", "none":
		return Allowed
	case "":
	default:
		if origin != "" && trusted[origin] {
			return Allowed
		}
		return CrossOrigin
	}
	if origin == "" {
		return Unknown
	}
	if trusted[origin] {
		return Allowed
	}
	// RFC 6454 §7.1: serialized-origin = scheme "://" host [ ":" port ], or "null";
	// its host and port must be the request's Host, compared as
	// http.CrossOriginProtection does.
	if u, err := url.Parse(origin); err == nil && u.Host == host {
		return Allowed
	}
	return CrossOrigin
}

// issue returns the request's token: the cookie's when it holds a well-formed
// one (fromCookie true), else a new one set in a cookie, which this request
// cannot have echoed. It stores the token under TokenKey.
func (cfg *Config) issue(c *celeris.Context) (token string, fromCookie bool) {
	name := cfg.cookieName(c)
	if v, err := c.Cookie(name); err == nil && validToken(v) {
		v = strings.Clone(v) // kept in the Context values past header reuse
		c.Set(TokenKey, v)
		return v, true
	}
	var b [tokenBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	v := base64.RawURLEncoding.EncodeToString(b[:])
	secure := strings.HasPrefix(name, "__Host-") || c.TLS() != nil || c.Scheme() == "https"
	_ = c.SetCookie(&http.Cookie{Name: name, Value: v, Path: "/", HttpOnly: true, Secure: secure, SameSite: cfg.SameSite})
	c.Set(TokenKey, v)
	return v, false
}

func (cfg *Config) cookieName(c *celeris.Context) string {
	if cfg.CookieName != "" {
		return cfg.CookieName
	}
	if c.TLS() != nil || c.Scheme() == "https" {
		return "__Host-csrf"
	}
	return "csrf"
}

func validToken(v string) bool {
	if len(v) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil
}

// Token returns the request's CSRF token in token mode ("" otherwise), for a
// hidden form field (<input type="hidden" name="csrf_token" value="...">) or a
// script's X-CSRF-Token header. It may be kept: it is a copy.
func Token(c *celeris.Context) string {
	v, _ := c.Get(TokenKey)
	s, _ := v.(string)
	return s
}
