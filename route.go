package celeris

import (
	"net/http"

	"github.com/celeris-dev/celeris/internal/directrun"
)

// HandlerFunc handles a request. A returned error goes to the server's ErrorHandler.
type HandlerFunc func(c *Context) error

// Route is a registered route. Its methods configure it at registration time.
type Route struct {
	method  string
	pattern string
	handler HandlerFunc
	mw      []MiddlewareFunc
	group   *Group
	final   HandlerFunc // handler wrapped in every middleware; set when the server starts
	inline  bool
	viaAny  bool // registered by Any: a CONNECT route of Any takes no authority-form CONNECT
	tunnel  bool // serves RFC 8441 extended CONNECT (xconnect.go)
	server  *Server
	name    string // Name (routing.go)

	// unmarkedLogged is 1 once a WebSocket switch on this unmarked route was
	// logged (warnUnmarkedTunnel).
	unmarkedLogged uint32

	// inPlace is what the route's handler showed when it ran in place: whether
	// it waits, and its requests go to workers (Config.HandlersOnWorkers).
	inPlace directrun.Record
}

// Inline marks the route to run on the connection's event loop instead of a worker
// goroutine. Only for handlers that never block (no I/O, no locks held long, no
// sleeps): a blocked inline handler stalls every connection of its event loop. An
// inline handler answers on the loop's own goroutine, before it returns: it must not
// hand the Context or a StreamWriter to another goroutine (the response state of an
// inline request is the loop's, unsynchronised). A request whose body is larger
// than 64 KiB runs on a worker even so: its body streams, and reading it would
// block the loop.
//
// Output never waits on the loop either. A response that would wait for the
// client, a Blob (String, JSON) body over 64 KiB or a file over 64 KiB (File,
// FileFS, Attachment, Inline, the static middleware), is recorded and sent from
// a worker after the handler returned, within the output bound (Config); the
// Blob's slice is borrowed until then (see Blob, Context.Pending). A streamed
// response (Stream, StreamLength, SSE) cannot move in the middle of the
// handler: it is queued whole, up to InlineStreamMax bytes, and the Write that
// would pass it fails with ErrInlineOutput and breaks the response off
// (HTTP/1.1 closes the connection, HTTP/2 resets the stream), logged once.
// Stream more from a route that is not Inline.
func (r *Route) Inline() *Route {
	r.inline = true
	return r
}

// Method and Pattern describe the route.
func (r *Route) Method() string  { return r.method }
func (r *Route) Pattern() string { return r.pattern }

// Handle registers h for method and pattern. Patterns: static segments, ":name"
// for one segment, "*name" for the rest of the path. A malformed or conflicting
// pattern panics, naming it, as does a method longer than h1.MaxMethodLength (32
// bytes), which no request may carry.
//
// CONNECT: a CONNECT request's target is host:port (authority-form, RFC 9112
// §3.2.3), not a path. Every such request goes to the first route registered for
// method CONNECT with Handle (of the Server or a Group), whatever its pattern, with
// an empty Path and the target in RequestURI. Any's CONNECT routes do not count.
// Without such a route CONNECT gets 501 Not Implemented. A handler cannot take
// the connection over for a tunnel: it can only answer.
//
// Requests whose method is longer than every registered method get 501, and
// "OPTIONS *" gets 200 with an Allow field listing the methods routes serve.
func (s *Server) Handle(method, pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	if h == nil {
		panic("celeris: nil handler for " + method + " " + pattern)
	}
	checkMethod(method, pattern)
	s.mustNotBeStarted("Handle")
	r := &Route{method: method, pattern: pattern, handler: h, mw: mw, server: s}
	s.router.Add(method, pattern, r)
	s.routes = append(s.routes, r)
	return r
}

// GET registers a GET route (HEAD requests fall back to it).
func (s *Server) GET(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return s.Handle(http.MethodGet, pattern, h, mw...)
}

// POST registers a POST route.
func (s *Server) POST(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return s.Handle(http.MethodPost, pattern, h, mw...)
}

// PUT registers a PUT route.
func (s *Server) PUT(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return s.Handle(http.MethodPut, pattern, h, mw...)
}

// PATCH registers a PATCH route.
func (s *Server) PATCH(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return s.Handle(http.MethodPatch, pattern, h, mw...)
}

// DELETE registers a DELETE route.
func (s *Server) DELETE(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return s.Handle(http.MethodDelete, pattern, h, mw...)
}

// HEAD registers a HEAD route.
func (s *Server) HEAD(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return s.Handle(http.MethodHead, pattern, h, mw...)
}

// OPTIONS registers an OPTIONS route.
func (s *Server) OPTIONS(pattern string, h HandlerFunc, mw ...MiddlewareFunc) *Route {
	return s.Handle(http.MethodOptions, pattern, h, mw...)
}

// AnyRoutes is what Any returns: the routes it registered, configured together.
type AnyRoutes []*Route

// Inline marks every route of the group inline.
func (rs AnyRoutes) Inline() AnyRoutes {
	for _, r := range rs {
		r.Inline()
	}
	return rs
}

// anyMethods are the methods Any registers.
var anyMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace,
}

// Any registers h for every standard method.
func (s *Server) Any(pattern string, h HandlerFunc, mw ...MiddlewareFunc) AnyRoutes {
	rs := make(AnyRoutes, 0, len(anyMethods))
	for _, m := range anyMethods {
		r := s.Handle(m, pattern, h, mw...)
		r.viaAny = true
		rs = append(rs, r)
	}
	return rs
}
