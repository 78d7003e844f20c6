package celeris

// Router ergonomics: path fixing redirects, named routes and URL reversing, the
// route listing, and serving on a listener the user provides.

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/celeris-dev/celeris/internal/router"
)

// redirectFixedPath wraps the not-found handler: a path that routes once cleaned
// (Config.CleanPath: "//", "/./", "/../") or with its trailing slash added or
// removed (Config.RedirectTrailingSlash) is redirected there: 301 for GET and
// HEAD, 308 for other methods (which keeps the method and body, RFC 9110
// §15.4.9). The query is kept.
func (s *Server) redirectFixedPath(notFound HandlerFunc) HandlerFunc {
	return func(c *Context) error {
		p := c.path()
		var candidates [3]string
		n := 0
		if s.cfg.CleanPath {
			if cp := cleanPath(p); cp != p {
				candidates[n] = cp
				n++
				p = cp
			}
		}
		if s.cfg.RedirectTrailingSlash {
			if len(p) > 1 && p[len(p)-1] == '/' {
				candidates[n] = p[:len(p)-1]
			} else {
				candidates[n] = p + "/"
			}
			n++
		}
		var ps router.Params
		for _, to := range candidates[:n] {
			if !safeRedirectPath(to) {
				continue
			}
			if _, res, _ := s.router.Lookup(c.method(), to, &ps); res != router.Found {
				ps.Reset()
				continue
			}
			ps.Reset()
			code := http.StatusMovedPermanently
			if m := c.method(); m != http.MethodGet && m != http.MethodHead {
				code = http.StatusPermanentRedirect
			}
			if q := c.req.RawQuery; q != "" {
				to += "?" + q
			}
			return c.Redirect(code, to)
		}
		return notFound(c)
	}
}

// cleanPath is path.Clean keeping a trailing slash (and "/" for "").
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	cp := path.Clean(p)
	if p[len(p)-1] == '/' && cp != "/" {
		cp += "/"
	}
	return cp
}

// safeRedirectPath refuses a Location a browser would read as another host
// ("//host", "/\host").
func safeRedirectPath(p string) bool {
	return len(p) > 0 && p[0] == '/' && !(len(p) > 1 && (p[1] == '/' || p[1] == '\\'))
}

// Name names the route, for Server.URL and Server.Routes. Names are unique: a
// second route with the same name panics.
func (r *Route) Name(name string) *Route {
	s := r.server
	s.mustNotBeStarted("Route.Name")
	if s.names == nil {
		s.names = make(map[string]*Route)
	}
	if other, ok := s.names[name]; ok && other != r {
		panic("celeris: route name " + name + " is already used by " + other.method + " " + other.pattern)
	}
	if r.name != "" {
		delete(s.names, r.name)
	}
	r.name = name
	s.names[name] = r
	return r
}

// URL builds the path of the route named name, filling its parameters in order
// with params (formatted with fmt.Sprint and percent-encoded; a "*rest"
// wildcard keeps its slashes):
//
//	s.GET("/todos/:id", getTodo).Name("todo")
//	s.URL("todo", 42) // "/todos/42"
//
// It returns "" when no route has that name or the number of params does not
// match the route's parameters.
func (s *Server) URL(name string, params ...any) string {
	r, ok := s.names[name]
	if !ok {
		return ""
	}
	var b strings.Builder
	i := 0
	rest := r.pattern
	for rest != "" {
		j := strings.IndexAny(rest, ":*")
		if j < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:j])
		wild := rest[j] == '*'
		end := strings.IndexByte(rest[j:], '/')
		if end < 0 {
			end = len(rest) - j
		}
		rest = rest[j+end:]
		if i >= len(params) {
			return ""
		}
		v := fmt.Sprint(params[i])
		i++
		if wild {
			segs := strings.Split(v, "/")
			for k := range segs {
				segs[k] = url.PathEscape(segs[k])
			}
			b.WriteString(strings.Join(segs, "/"))
		} else {
			b.WriteString(url.PathEscape(v))
		}
	}
	if i != len(params) {
		return ""
	}
	return b.String()
}

// RouteInfo describes a registered route (Server.Routes).
type RouteInfo struct {
	Method  string
	Pattern string // the full pattern, group prefix included
	Name    string // "" when unnamed
}

// Routes lists the registered routes in registration order.
func (s *Server) Routes() []RouteInfo {
	out := make([]RouteInfo, len(s.routes))
	for i, r := range s.routes {
		out[i] = RouteInfo{Method: r.method, Pattern: r.pattern, Name: r.name}
	}
	return out
}

// ErrListenerNotSupported: StartListener was asked to serve a listener with the
// gnet engine (Config.Engine EngineGnet).
var ErrListenerNotSupported = errors.New("celeris: serving on a provided net.Listener needs the std engine; the gnet engine opens its own listener")

// StartListener serves on a listener the caller opened (systemd socket
// activation, a test's listener) instead of listening on Config.Addr, as
// http.Server.Serve does. It runs the std engine on ln (EngineAuto picks it):
// gnet v2.10 has no way to adopt an existing listening socket (gnet.Run binds the
// address itself), so Config.Engine EngineGnet gets ErrListenerNotSupported. A
// Config.TLSAddr is served beside it as with Start. Shutdown closes ln.
func (s *Server) StartListener(ln net.Listener) error {
	if ln == nil {
		return errors.New("celeris: StartListener of a nil listener")
	}
	if s.cfg.Engine == EngineGnet {
		return ErrListenerNotSupported
	}
	s.mu.Lock()
	s.listener = ln
	s.mu.Unlock()
	return s.start("", "", false)
}
