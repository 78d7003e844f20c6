// Package cors implements Cross-Origin Resource Sharing (the Fetch standard's CORS
// protocol, https://fetch.spec.whatwg.org/#http-cors-protocol).
//
// Register it with s.Use, not per route: a preflight is an OPTIONS request, and on
// a path without an OPTIONS route the server answers OPTIONS itself (204 with
// Allow, or 405 with Config.DisableAutoOptions) without running per-route
// middleware. Server middleware wraps those answers and the 404s, so the preflight
// is answered there.
//
// What the middleware does with a request:
//
//   - No Origin header: not a CORS request. Nothing changes, except that a
//     configuration whose answer depends on the origin adds "Vary: Origin" so that a
//     cache does not serve this response to a cross-origin request. Nothing is
//     allocated.
//   - Preflight (OPTIONS with Origin and Access-Control-Request-Method): answered
//     204 here, without calling the rest of the chain. When the origin and the
//     requested method (and headers, if AllowHeaders is set) are allowed, the answer
//     carries Access-Control-Allow-Origin, -Allow-Methods, -Allow-Headers, -Max-Age
//     and -Allow-Credentials; otherwise it carries none of them, and the browser
//     refuses the actual request.
//   - Any other request with an allowed Origin: Access-Control-Allow-Origin (and
//     -Allow-Credentials, -Expose-Headers) are added and the chain runs.
//   - A disallowed Origin: no CORS headers; the chain runs (the browser keeps the
//     response from the page).
//
// With AllowCredentials the origin is echoed, never "*" (the Fetch standard refuses
// "*" with credentials), and "Vary: Origin" is added.
package cors

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// AllowOrigins lists the allowed origins, e.g. "https://example.com". Each
	// entry is an exact origin (compared case-insensitively), "*" for any origin,
	// or a pattern with one "*" such as "https://*.example.com" (the "*" matches
	// one or more characters). ["*"]
	AllowOrigins []string
	// AllowOriginFunc, when set, decides instead of AllowOrigins. origin is valid
	// until the handler returns.
	AllowOriginFunc func(c *celeris.Context, origin string) bool
	// AllowMethods are the methods a preflight allows
	// [GET, HEAD, PUT, PATCH, POST, DELETE].
	AllowMethods []string
	// AllowHeaders are the request headers a preflight allows (case-insensitive).
	// [nil: whatever the preflight asks for (Access-Control-Request-Headers) is
	// echoed]
	AllowHeaders []string
	// ExposeHeaders are response headers the page may read
	// (Access-Control-Expose-Headers) [none].
	ExposeHeaders []string
	// AllowCredentials lets the page send cookies and read the response of a
	// credentialed request (Access-Control-Allow-Credentials: true) [false].
	AllowCredentials bool
	// MaxAge is how long, in seconds, a browser may cache a preflight answer
	// (Access-Control-Max-Age). 0 sends no header (browsers then use 5 seconds);
	// a negative value sends 0 (no caching). [0]
	MaxAge int
}

// Default returns the middleware allowing any origin, without credentials.
func Default() celeris.MiddlewareFunc { return New(Config{}) }

type pattern struct{ prefix, suffix string }

// policy is a Config compiled for the request path.
type policy struct {
	any           bool // "*" listed
	exact         []string
	patterns      []pattern
	fn            func(*celeris.Context, string) bool
	methods       []string
	methodsHeader string
	headers       []string // lower case; nil echoes the request
	headersHeader string
	expose        string
	credentials   bool
	maxAge        string
	varyAlways    bool // the answer depends on the Origin
}

// New returns the middleware. It panics on a malformed AllowOrigins pattern.
func New(cfg Config) celeris.MiddlewareFunc {
	p := compile(cfg)
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			origin := c.Header("Origin")
			if origin == "" {
				if p.varyAlways {
					c.AddHeader("Vary", "Origin")
				}
				return next(c)
			}
			if c.Method() == http.MethodOptions {
				if reqMethod := c.Header("Access-Control-Request-Method"); reqMethod != "" {
					p.preflight(c, origin, reqMethod)
					return c.NoContent(http.StatusNoContent)
				}
			}
			if p.varyAlways {
				c.AddHeader("Vary", "Origin")
			}
			if p.allowed(c, origin) {
				p.setOrigin(c, origin)
				if p.expose != "" {
					c.SetHeader("Access-Control-Expose-Headers", p.expose)
				}
			}
			return next(c)
		}
	}
}

func compile(cfg Config) *policy {
	p := &policy{fn: cfg.AllowOriginFunc, credentials: cfg.AllowCredentials}
	origins := cfg.AllowOrigins
	if origins == nil && cfg.AllowOriginFunc == nil {
		origins = []string{"*"}
	}
	for _, o := range origins {
		switch n := strings.Count(o, "*"); {
		case o == "*":
			p.any = true
		case n == 0:
			p.exact = append(p.exact, o)
		case n == 1:
			pre, suf, _ := strings.Cut(o, "*")
			p.patterns = append(p.patterns, pattern{prefix: pre, suffix: suf})
		default:
			panic("cors: malformed origin pattern " + strconv.Quote(o))
		}
	}
	p.methods = cfg.AllowMethods
	if p.methods == nil {
		p.methods = []string{http.MethodGet, http.MethodHead, http.MethodPut, http.MethodPatch, http.MethodPost, http.MethodDelete}
	}
	p.methodsHeader = strings.Join(p.methods, ", ")
	if cfg.AllowHeaders != nil {
		p.headers = make([]string, len(cfg.AllowHeaders))
		for i, h := range cfg.AllowHeaders {
			p.headers[i] = strings.ToLower(strings.TrimSpace(h))
		}
		p.headersHeader = strings.Join(cfg.AllowHeaders, ", ")
	}
	p.expose = strings.Join(cfg.ExposeHeaders, ", ")
	switch {
	case cfg.MaxAge > 0:
		p.maxAge = strconv.Itoa(cfg.MaxAge)
	case cfg.MaxAge < 0:
		p.maxAge = "0"
	}
	// Only "any origin, no credentials, no func" answers the same to everyone.
	p.varyAlways = !(p.any && !p.credentials && p.fn == nil)
	return p
}

func (p *policy) allowed(c *celeris.Context, origin string) bool {
	if p.fn != nil {
		return p.fn(c, origin)
	}
	if p.any {
		return true
	}
	for _, o := range p.exact {
		if strings.EqualFold(o, origin) {
			return true
		}
	}
	for _, pt := range p.patterns {
		if len(origin) > len(pt.prefix)+len(pt.suffix) &&
			strings.EqualFold(origin[:len(pt.prefix)], pt.prefix) &&
			strings.EqualFold(origin[len(origin)-len(pt.suffix):], pt.suffix) {
			return true
		}
	}
	return false
}

func (p *policy) setOrigin(c *celeris.Context, origin string) {
	if p.any && !p.credentials && p.fn == nil {
		c.SetHeader("Access-Control-Allow-Origin", "*")
		return
	}
	c.SetHeader("Access-Control-Allow-Origin", origin)
	if p.credentials {
		c.SetHeader("Access-Control-Allow-Credentials", "true")
	}
}

// preflight sets the headers of a preflight answer.
func (p *policy) preflight(c *celeris.Context, origin, reqMethod string) {
	if p.varyAlways {
		c.AddHeader("Vary", "Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
	} else {
		c.AddHeader("Vary", "Access-Control-Request-Method, Access-Control-Request-Headers")
	}
	if !p.allowed(c, origin) || !p.methodAllowed(reqMethod) {
		return
	}
	reqHeaders := c.Header("Access-Control-Request-Headers")
	allowHeaders := p.headersHeader
	if p.headers == nil {
		allowHeaders = reqHeaders // echo (valid until the handler returns: long enough)
	} else if !p.headersAllowed(reqHeaders) {
		return
	}
	p.setOrigin(c, origin)
	c.SetHeader("Access-Control-Allow-Methods", p.methodsHeader)
	if allowHeaders != "" {
		c.SetHeader("Access-Control-Allow-Headers", allowHeaders)
	}
	if p.maxAge != "" {
		c.SetHeader("Access-Control-Max-Age", p.maxAge)
	}
}

func (p *policy) methodAllowed(m string) bool {
	for _, am := range p.methods {
		if am == m || am == "*" {
			return true
		}
	}
	return false
}

// headersAllowed reports whether every header of the comma-separated list is in
// AllowHeaders (the list is lower case per the Fetch standard, compared ignoring case).
func (p *policy) headersAllowed(list string) bool {
	for list != "" {
		var h string
		h, list, _ = strings.Cut(list, ",")
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		ok := false
		for _, ah := range p.headers {
			if ah == "*" || strings.EqualFold(ah, h) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
