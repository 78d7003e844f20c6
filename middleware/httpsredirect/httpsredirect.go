// Package httpsredirect redirects plaintext HTTP requests to HTTPS.
//
// One Server can listen on a plaintext address (Config.Addr) and a TLS address
// (Config.TLSAddr) with one router; this middleware, registered with s.Pre (so that
// it also answers requests no route matches), sends every plaintext request to the
// same host and target over HTTPS and lets TLS requests through:
//
//	s := celeris.New(celeris.Config{Addr: ":80", TLSAddr: ":443", TLSCertFile: "cert.pem", TLSKeyFile: "key.pem"})
//	s.Pre(httpsredirect.New(httpsredirect.Config{}))
//
// Behind a proxy that terminates TLS and forwards plaintext, set
// TrustForwardedProto so that requests the proxy received over HTTPS
// (X-Forwarded-Proto: https) are not redirected again; only do so when every
// request comes through that proxy, since a client can send the header itself.
//
// HSTSMaxAge adds Strict-Transport-Security to the answers of the requests let
// through over HTTPS (RFC 6797 §7.2: never on plaintext answers, where a network
// attacker could forge or strip it), so that browsers go straight to HTTPS next
// time instead of trusting a plaintext redirect. Skip exempts requests (a health
// check a load balancer sends over plaintext, an ACME HTTP-01 challenge).
package httpsredirect

import (
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/secure"
)

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// TLSPort is the port of the HTTPS address to redirect to; "443" or "" leaves
	// the port out of the Location. [""]
	TLSPort string
	// Code is the redirect status: 308 keeps the method and body of a POST, as 301
	// does not in every client. [308 Permanent Redirect]
	Code int
	// TrustForwardedProto lets requests carrying X-Forwarded-Proto: https through
	// (a TLS-terminating proxy in front). [false]
	TrustForwardedProto bool
	// Skip lets a plaintext request through unredirected when it returns true
	// [none].
	Skip func(c *celeris.Context) bool
	// HSTSMaxAge, when positive, adds Strict-Transport-Security with this max-age
	// to every answer over HTTPS [0: none].
	HSTSMaxAge time.Duration
	// HSTSIncludeSubdomains adds includeSubDomains to the HSTS value [false].
	HSTSIncludeSubdomains bool
	// HSTSPreload adds preload to the HSTS value [false].
	HSTSPreload bool
}

// New returns the middleware.
func New(cfg Config) celeris.MiddlewareFunc {
	code := cfg.Code
	if code == 0 {
		code = http.StatusPermanentRedirect
	}
	port := cfg.TLSPort
	if port == "443" {
		port = ""
	}
	hsts := ""
	if cfg.HSTSMaxAge > 0 {
		hsts = secure.HSTS(cfg.HSTSMaxAge, cfg.HSTSIncludeSubdomains, cfg.HSTSPreload)
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if c.Scheme() == "https" || c.TLS() != nil ||
				cfg.TrustForwardedProto && strings.EqualFold(c.Header("X-Forwarded-Proto"), "https") {
				if hsts != "" {
					c.SetHeader("Strict-Transport-Security", hsts)
				}
				return next(c)
			}
			if cfg.Skip != nil && cfg.Skip(c) {
				return next(c)
			}
			host := c.Host()
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			} else {
				host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
			}
			if host == "" {
				return c.String(http.StatusBadRequest, "missing Host")
			}
			if port != "" || strings.Contains(host, ":") {
				// JoinHostPort brackets an IPv6 literal; an empty port is left out
				// below.
				host = net.JoinHostPort(host, port)
				host = strings.TrimSuffix(host, ":")
			}
			target := c.RequestURI()
			if !strings.HasPrefix(target, "/") {
				// absolute-form (RFC 9112 §3.2.2) or "*": rebuild from the path.
				target = c.Path()
				if q := c.RawQuery(); q != "" {
					target += "?" + q
				}
			}
			return c.Redirect(code, "https://"+host+target)
		}
	}
}
