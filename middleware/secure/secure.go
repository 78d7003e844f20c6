// Package secure sets the response headers that harden a site in browsers:
// Strict-Transport-Security (HSTS, RFC 6797), Content-Security-Policy (CSP Level 3)
// with an optional per-request nonce, X-Content-Type-Options, X-Frame-Options
// (RFC 7034), Referrer-Policy, Cross-Origin-Opener-Policy and
// Cross-Origin-Resource-Policy.
//
// The defaults are safe for an application that serves its own pages and frames
// none: every header but HSTS and CSP is on. HSTS is on when HSTSMaxAge is
// positive (HSTSYear is the usual value): as in unrolled/secure and Echo, zero
// means off, since a browser that saw HSTS refuses plaintext to the host for
// max-age. CSP has no default, since only the application knows which origins
// its pages load from; a policy containing
// "{nonce}" gets a fresh random nonce per request in its place, which Nonce returns
// for the page's inline <script nonce="..."> and <style nonce="..."> elements (pass
// it to the template with the data, or call the template function "cspNonce",
// which celeris.HTMLTemplates provides):
//
//	s.Use(secure.New(secure.Config{
//		ContentSecurityPolicy: "default-src 'self'; script-src 'self' 'nonce-{nonce}'",
//	}))
//	s.GET("/", func(c *celeris.Context) error {
//		return c.Render(200, "index.html", map[string]any{"Nonce": secure.Nonce(c)})
//	})
//
// HSTS is sent on HTTPS answers only (RFC 6797 §7.2: a host must not include it
// in answers over non-secure transport), HTTPS being c.Scheme() == "https", which
// believes X-Forwarded-Proto from Config.TrustedProxies only.
//
// The headers are set before the handler runs, so a handler may replace or delete
// any of them (c.SetHeader, c.DelHeader) for its own answer.
package secure

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Zero values mean the defaults in brackets;
// for the string fields, "-" sends no header.
type Config struct {
	// HSTSMaxAge is Strict-Transport-Security's max-age, sent when positive
	// (HSTSYear: a year); zero or negative sends no HSTS [0: none].
	HSTSMaxAge time.Duration
	// HSTSIncludeSubdomains adds includeSubDomains (RFC 6797 §6.1.2): every
	// subdomain must then serve HTTPS too [false].
	HSTSIncludeSubdomains bool
	// HSTSPreload adds preload, the opt-in to browsers' built-in HSTS lists
	// (hstspreload.org requires includeSubDomains and a max-age of a year) [false].
	HSTSPreload bool
	// ContentSecurityPolicy is the policy; every "{nonce}" in it is replaced by
	// the request's nonce (see Nonce) [none].
	ContentSecurityPolicy string
	// CSPReportOnly sends the policy as Content-Security-Policy-Report-Only: the
	// browser reports violations without blocking, for trying a policy [false].
	CSPReportOnly bool
	// ContentTypeNosniff is X-Content-Type-Options ["nosniff"].
	ContentTypeNosniff string
	// FrameOptions is X-Frame-Options (RFC 7034), for browsers without CSP's
	// frame-ancestors ["DENY"].
	FrameOptions string
	// ReferrerPolicy is Referrer-Policy ["strict-origin-when-cross-origin"].
	ReferrerPolicy string
	// CrossOriginOpenerPolicy is Cross-Origin-Opener-Policy ["same-origin"].
	CrossOriginOpenerPolicy string
	// CrossOriginResourcePolicy is Cross-Origin-Resource-Policy ["same-origin"].
	CrossOriginResourcePolicy string
	// CrossOriginEmbedderPolicy is Cross-Origin-Embedder-Policy ["-": none].
	CrossOriginEmbedderPolicy string
	// PermissionsPolicy is Permissions-Policy ["-": none].
	PermissionsPolicy string
	// Skip lets a request through without the headers when it returns true
	// [none].
	Skip func(c *celeris.Context) bool
}

// HSTSYear is a year, the max-age hstspreload.org asks for and the usual
// HSTSMaxAge.
const HSTSYear = 365 * 24 * time.Hour

// NonceKey is the Context key under which the request's CSP nonce is stored.
const NonceKey = "secure.nonce"

func init() {
	celeris.RegisterTemplateFunc("cspNonce", func(c *celeris.Context) any { return Nonce(c) })
}

type field struct{ name, value string }

// New returns the middleware.
func New(cfg Config) celeris.MiddlewareFunc {
	static, cspName, cspNonce := cfg.fields()
	hsts := ""
	if cfg.HSTSMaxAge > 0 {
		hsts = HSTS(cfg.HSTSMaxAge, cfg.HSTSIncludeSubdomains, cfg.HSTSPreload)
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if cfg.Skip != nil && cfg.Skip(c) {
				return next(c)
			}
			for _, f := range static {
				c.SetHeader(f.name, f.value)
			}
			if hsts != "" && (c.TLS() != nil || c.Scheme() == "https") {
				c.SetHeader("Strict-Transport-Security", hsts)
			}
			if cspNonce != "" {
				n := newNonce()
				c.Set(NonceKey, n)
				c.SetHeader(cspName, strings.ReplaceAll(cspNonce, "{nonce}", n))
			}
			return next(c)
		}
	}
}

// fields applies cfg's defaults and returns the fields set on every answer,
// the CSP field's name, and the policy when it holds "{nonce}" ("" otherwise).
func (cfg *Config) fields() (static []field, cspName, cspNonce string) {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&cfg.ContentTypeNosniff, "nosniff")
	def(&cfg.FrameOptions, "DENY")
	def(&cfg.ReferrerPolicy, "strict-origin-when-cross-origin")
	def(&cfg.CrossOriginOpenerPolicy, "same-origin")
	def(&cfg.CrossOriginResourcePolicy, "same-origin")
	def(&cfg.CrossOriginEmbedderPolicy, "-")
	def(&cfg.PermissionsPolicy, "-")
	add := func(name, v string) {
		if v != "-" {
			static = append(static, field{name, v})
		}
	}
	add("X-Content-Type-Options", cfg.ContentTypeNosniff)
	add("X-Frame-Options", cfg.FrameOptions)
	add("Referrer-Policy", cfg.ReferrerPolicy)
	add("Cross-Origin-Opener-Policy", cfg.CrossOriginOpenerPolicy)
	add("Cross-Origin-Resource-Policy", cfg.CrossOriginResourcePolicy)
	add("Cross-Origin-Embedder-Policy", cfg.CrossOriginEmbedderPolicy)
	add("Permissions-Policy", cfg.PermissionsPolicy)
	cspName = "Content-Security-Policy"
	if cfg.CSPReportOnly {
		cspName = "Content-Security-Policy-Report-Only"
	}
	if p := cfg.ContentSecurityPolicy; p != "" && p != "-" {
		if strings.Contains(p, "{nonce}") {
			cspNonce = p
		} else {
			static = append(static, field{cspName, p})
		}
	}
	return static, cspName, cspNonce
}

// RefusalHeader returns a celeris.Config.RefusalHeader giving the answers the
// server makes without running middleware (400, 414, 431, ... from the protocol
// layers; see celeris.Config.RefusalHeader) the headers New would set from cfg,
// merged with those of next (nil: none), such as requestid.RefusalHeader:
//
//	secureCfg := secure.Config{ContentSecurityPolicy: "default-src 'self'"}
//	s := celeris.New(celeris.Config{RefusalHeader: secure.RefusalHeader(secureCfg, requestid.RefusalHeader)})
//	s.Use(secure.New(secureCfg))
//
// Two of them are left out: HSTS, since the function is not told whether the
// connection is HTTPS (a browser keeps the HSTS of the host's other answers), and
// a policy with "{nonce}", replaced by "default-src 'none'" as the refusal's
// plain text body needs nothing.
func RefusalHeader(cfg Config, next func(status int) http.Header) func(status int) http.Header {
	cfg.HSTSMaxAge = 0
	if strings.Contains(cfg.ContentSecurityPolicy, "{nonce}") {
		cfg.ContentSecurityPolicy = "default-src 'none'"
	}
	static, _, _ := cfg.fields()
	h := make(http.Header, len(static))
	for _, f := range static {
		h[http.CanonicalHeaderKey(f.name)] = []string{f.value}
	}
	if next == nil {
		return func(int) http.Header { return h } // nothing modifies h
	}
	return func(status int) http.Header {
		more := next(status)
		if len(more) == 0 {
			return h
		}
		out := make(http.Header, len(h)+len(more))
		for k, v := range h {
			out[k] = v
		}
		for k, v := range more {
			out[k] = v
		}
		return out
	}
}

// Nonce returns the request's CSP nonce, "" when the policy has none (or the
// middleware did not run). It is a fresh string of 128 random bits per request
// (CSP Level 3 §6.7.2.4 asks for at least 128 bits, unguessable) in unpadded
// base64url (RFC 4648 §5), which CSP's base64-value grammar admits and which
// html/template writes into an attribute unescaped (standard base64's "+"
// would become "&#43;").
func Nonce(c *celeris.Context) string {
	v, _ := c.Get(NonceKey)
	s, _ := v.(string)
	return s
}

func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// HSTS formats a Strict-Transport-Security value (RFC 6797 §6.1): max-age in
// whole seconds, then includeSubDomains and preload when asked.
func HSTS(maxAge time.Duration, includeSubdomains, preload bool) string {
	v := "max-age=" + strconv.FormatInt(int64(maxAge/time.Second), 10)
	if includeSubdomains {
		v += "; includeSubDomains"
	}
	if preload {
		v += "; preload"
	}
	return v
}
