package celeris

import (
	"net/http"
	"strings"
)

// MiddlewareFunc wraps a handler. It is the one middleware style of Celeris:
//
//	func Timing(next celeris.HandlerFunc) celeris.HandlerFunc {
//		return func(c *celeris.Context) error {
//			start := time.Now()
//			err := next(c)
//			log.Println(c.Path(), time.Since(start))
//			return err
//		}
//	}
//
// Chains are composed once, when the server starts, so calling through them costs
// no allocation per request. Order: Pre middleware (before routing), then Use
// middleware of the server, then of each enclosing group (outermost first), then the
// route's own middleware, then the handler.
type MiddlewareFunc func(next HandlerFunc) HandlerFunc

// Use adds middleware that wraps every route, including the not-found and
// method-not-allowed answers. It applies to routes registered before and after it.
func (s *Server) Use(mw ...MiddlewareFunc) {
	s.mustNotBeStarted("Use")
	s.use = append(s.use, mw...)
}

// Pre adds middleware that runs before routing: it may rewrite the method or path
// (SetMethod, SetPath) and the router then sees the new values. A server with Pre
// middleware runs every request on a worker (Inline routes included).
func (s *Server) Pre(mw ...MiddlewareFunc) {
	s.mustNotBeStarted("Pre")
	s.pre = append(s.pre, mw...)
}

// NotFound sets the handler for requests that match no route. Without one, such a
// request's chain returns ErrNotFound, which the error handler answers (404).
func (s *Server) NotFound(h HandlerFunc) { s.mustNotBeStarted("NotFound"); s.notFound = h }

// MethodNotAllowed sets the handler for requests whose path matches routes of
// other methods only. The Allow header is already set when it runs. Without one,
// such a request's chain returns ErrMethodNotAllowed, which the error handler
// answers (405, Allow kept).
func (s *Server) MethodNotAllowed(h HandlerFunc) {
	s.mustNotBeStarted("MethodNotAllowed")
	s.methodNotAllowed = h
}

func (s *Server) mustNotBeStarted(what string) {
	if s.frozen {
		panic("celeris: " + what + " called after the server started")
	}
}

// Group is a set of routes under a common prefix with common middleware.
type Group struct {
	server *Server
	parent *Group
	prefix string
	mw     []MiddlewareFunc
}

// Group returns a route group under prefix with the given middleware.
func (s *Server) Group(prefix string, mw ...MiddlewareFunc) *Group {
	return &Group{server: s, prefix: cleanPrefix(prefix), mw: mw}
}

// Group returns a nested group.
func (g *Group) Group(prefix string, mw ...MiddlewareFunc) *Group {
	return &Group{server: g.server, parent: g, prefix: g.prefix + cleanPrefix(prefix), mw: mw}
}

// Use adds middleware to the group (it applies to all of its routes, nested groups
// included, whenever they were registered).
func (g *Group) Use(mw ...MiddlewareFunc) {
	g.server.mustNotBeStarted("Group.Use")
	g.mw = append(g.mw, mw...)
}

func cleanPrefix(p string) string {
	if p == "" || p == "/" {
		return ""
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return strings.TrimSuffix(p, "/")
}

// Handle registers h for method under the group's prefix.
func (g *Group) Handle(method, pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	p := g.prefix + pattern
	if pattern == "" {
		p = g.prefix
		if p == "" {
			p = "/"
		}
	}
	r := g.server.Handle(method, p, h, mw...)
	r.group = g
	return r
}

// GET registers a GET route in the group.
func (g *Group) GET(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return g.Handle(http.MethodGet, pattern, h, mw...)
}

// POST registers a POST route in the group.
func (g *Group) POST(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return g.Handle(http.MethodPost, pattern, h, mw...)
}

// PUT registers a PUT route in the group.
func (g *Group) PUT(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return g.Handle(http.MethodPut, pattern, h, mw...)
}

// PATCH registers a PATCH route in the group.
func (g *Group) PATCH(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return g.Handle(http.MethodPatch, pattern, h, mw...)
}

// DELETE registers a DELETE route in the group.
func (g *Group) DELETE(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return g.Handle(http.MethodDelete, pattern, h, mw...)
}

// HEAD registers a HEAD route in the group.
func (g *Group) HEAD(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return g.Handle(http.MethodHead, pattern, h, mw...)
}

// OPTIONS registers an OPTIONS route in the group.
func (g *Group) OPTIONS(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return g.Handle(http.MethodOptions, pattern, h, mw...)
}

// Any registers h for every standard method in the group.
func (g *Group) Any(pattern string, h HandlerFunc, mw ...MiddlewareFunc) AnyRoutes {
	rs := make(AnyRoutes, 0, len(anyMethods))
	for _, m := range anyMethods {
		r := g.Handle(m, pattern, h, mw...)
		r.viaAny = true
		rs = append(rs, r)
	}
	return rs
}

// chain wraps h in mw, the first middleware outermost.
func chain(h HandlerFunc, mw []MiddlewareFunc) HandlerFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// freeze composes every chain; it runs once, when the server starts.
func (s *Server) freeze() {
	if s.frozen {
		return
	}
	s.frozen = true
	for _, r := range s.routes {
		h := chain(r.handler, r.mw)
		for g := r.group; g != nil; g = g.parent {
			h = chain(h, g.mw)
		}
		r.final = chain(h, s.use)
	}
	nf := s.notFound
	if nf == nil {
		// The error handler answers (one error format for every answer).
		nf = func(*Context) error { return ErrNotFound }
	}
	if s.cfg.RedirectTrailingSlash || s.cfg.CleanPath {
		nf = s.redirectFixedPath(nf) // routing.go
	}
	s.notFoundFinal = chain(nf, s.use)
	mna := s.methodNotAllowed
	if mna == nil {
		mna = func(*Context) error { return ErrMethodNotAllowed }
	}
	s.methodNotAllowedFinal = chain(mna, s.use)
	s.freezeTargets()
	if len(s.pre) > 0 {
		s.preFinal = chain(s.routeAndRun, s.pre)
	}
}

// routeAndRun is the innermost handler of the Pre chain: it routes the (possibly
// rewritten) request and runs the route's chain.
func (s *Server) routeAndRun(c *Context) error {
	s.lookup(c)
	return s.dispatch(c)
}
