package celeris

import (
	"net/http"
	"sort"
	"strings"

	"github.com/celeris-dev/celeris/internal/h1"
)

// Requests the router cannot route by path, and methods no route implements. The
// Server answers these itself, through the Use middleware like its 404 and 405:
//
//   - OPTIONS * (asterisk-form, RFC 9112 §3.2.4) asks about the server, not a
//     resource (RFC 9110 §9.3.7: "An OPTIONS request with an asterisk ("*") as the
//     request target applies to the server in general rather than to a specific
//     resource"): 200 with an Allow field listing every method some route serves,
//     HEAD where GET is served, and OPTIONS. Not a 404: the target is not a path.
//   - CONNECT host:port (authority-form, RFC 9112 §3.2.3) has no path. It goes to
//     the first route registered for CONNECT with Handle or a Group's Handle,
//     whatever its pattern (Any's CONNECT routes do not count: a catch-all must not
//     answer tunnel requests by accident); without one it gets 501 (RFC 9110
//     §9.3.6 makes CONNECT optional for a server).
//   - OPTIONS on a path that has routes but no OPTIONS route asks which methods
//     the resource supports (RFC 9110 §9.3.7): 204 with an Allow field listing
//     them and OPTIONS, as httprouter answers it, instead of a 405. It runs the
//     Use middleware, so a CORS middleware answers preflights first (405 answers
//     list the routes' methods only). Config.DisableAutoOptions turns this off;
//     an OPTIONS route, when registered, answers instead. A path with no route
//     still gets 404.
//   - A method longer than every method of a route gets 501 (RFC 9112 §3: "A
//     server that receives a method longer than any that it implements SHOULD
//     respond with a 501 (Not Implemented) status code"). Methods longer than
//     h1.MaxMethodLength are refused by the parser already, with 501 too.

// freezeTargets builds the built-in routes for these requests (at freeze, after the
// routes' chains).
func (s *Server) freezeTargets() {
	methods := map[string]bool{http.MethodOptions: true}
	s.maxMethod = len(http.MethodOptions)
	s.connect = nil
	for _, r := range s.routes {
		if r.method == http.MethodConnect {
			if r.viaAny {
				continue
			}
			if s.connect == nil {
				s.connect = r
			}
		}
		methods[r.method] = true
		if r.method == http.MethodGet {
			methods[http.MethodHead] = true // GET routes serve HEAD (RFC 9110 §9.3.2)
		}
		s.maxMethod = max(s.maxMethod, len(r.method))
	}
	list := make([]string, 0, len(methods))
	for m := range methods {
		list = append(list, m)
	}
	sort.Strings(list)
	allow := strings.Join(list, ", ")
	inline := len(s.use) == 0 // built-in answers never block; Use middleware might
	s.optionsStar = &Route{method: http.MethodOptions, pattern: "*", inline: inline}
	s.notImplemented = &Route{inline: inline}
	s.autoOptions = nil
	s.router.AllowOptions = !s.cfg.DisableAutoOptions
	if s.router.AllowOptions {
		s.autoOptions = &Route{method: http.MethodOptions, inline: inline}
	}
	// One chain for every answer: Use middleware is composed once per chain.
	final := chain(func(c *Context) error {
		switch c.route {
		case s.optionsStar:
			c.SetHeader("Allow", allow)
			return c.NoContent(http.StatusOK)
		case s.autoOptions:
			c.SetHeader("Allow", c.allow)
			return c.NoContent(http.StatusNoContent)
		}
		return c.String(http.StatusNotImplemented, http.StatusText(http.StatusNotImplemented))
	}, s.use)
	s.optionsStar.final, s.notImplemented.final = final, final
	if s.autoOptions != nil {
		s.autoOptions.final = final
	}
}

// lookupTarget routes a request no route matched when its method is longer than
// any route's or its target is not a path. It reports false for the others.
func (s *Server) lookupTarget(c *Context, method, path string) bool {
	switch {
	case len(method) > s.maxMethod:
		c.route = s.notImplemented
	case method == http.MethodConnect && path == "":
		// Authority-form: there is no path to route (h1 refuses origin-form
		// CONNECT with 400; an HTTP/2 CONNECT has no :path, RFC 9113 §8.5).
		c.route = s.connect
		if c.route == nil {
			c.route = s.notImplemented
		}
	case method == http.MethodOptions && path == "*":
		c.route = s.optionsStar
	default:
		return false
	}
	return true
}

// checkMethod panics at registration on a method no request can carry.
func checkMethod(method, pattern string) {
	if len(method) > h1.MaxMethodLength {
		panic("celeris: method of " + method + " " + pattern + " is longer than any request may carry (h1.MaxMethodLength)")
	}
}
