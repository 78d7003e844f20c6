package celeris

import (
	"net/http"
	"sync/atomic"

	"github.com/celeris-dev/celeris/internal/router"
)

// Extended CONNECT (RFC 8441) opens a WebSocket over an HTTP/2 stream: a CONNECT
// with :protocol = websocket to the path a GET opens over HTTP/1.1. A 2xx answer
// to it opens a tunnel (RFC 9110 §9.3.6: "A server MUST NOT send any
// Transfer-Encoding or Content-Length header fields in a 2xx (Successful)
// response to CONNECT"), so only a route that switches the stream to a tunnel may
// take it:
//
//   - a route is a tunnel route when it was marked with Route.ExtendedConnect: a
//     mark on the route, so that it holds whatever wraps the handler (a user's
//     closure around websocket.Handler, celerisotel.WebSocket). A WebSocket
//     switched over HTTP/1.1 on an unmarked GET route is logged once, since
//     WebSocket over HTTP/2 and HTTP/3 is then off for it. An extended CONNECT to a path whose
//     GET route is a tunnel route runs that route. An http.Handler mounted with
//     Adapt on such a route sees it as net/http's HTTP/2 server presents it with
//     extended CONNECT enabled: Method CONNECT, r.Header[":protocol"], r.Body the
//     client's bytes, its writes after WriteHeader(200) and Flush the server's.
//   - an extended CONNECT to any other path is routed as the CONNECT it is: 405
//     with Allow where the path has routes (a GET route that would answer 200
//     with a body, an http.Handler mounted with Adapt), 404 where it has none.
//   - HTTP/2 advertises SETTINGS_ENABLE_CONNECT_PROTOCOL only when the server has
//     a tunnel route and Config.DisableExtendedConnect is not set. Browsers open
//     WebSockets by extended CONNECT on an h2 connection that advertises it, and
//     on an HTTP/1.1 connection otherwise (net/http does not advertise it by
//     default, for the same reason). WebSocket libraries mounted with Adapt
//     (gorilla/websocket, coder/websocket) take over an HTTP/1.1 connection
//     (http.Hijacker) and cannot serve an HTTP/2 stream: a server whose only
//     WebSocket routes are such (unmarked) never advertises it, and one that mixes
//     them with websocket package routes sets DisableExtendedConnect so that
//     browsers reach both over HTTP/1.1. Without the setting a client may not send :protocol:
//     such a stream is malformed (RFC 8441 §4), refused by the HTTP/2 layer.

// ExtendedConnect marks a GET route whose handler answers an RFC 8441 extended
// CONNECT by switching to a tunnel: a handler that calls websocket.Upgrade or
// websocket.UpgradeEvents itself, or an http.Handler mounted with Adapt that
// serves extended CONNECT as on net/http's HTTP/2 server (Method CONNECT,
// r.Header[":protocol"]; gorilla/websocket and coder/websocket do not, and must
// stay unmarked). The route then serves WebSocket over HTTP/2, and the server
// advertises SETTINGS_ENABLE_CONNECT_PROTOCOL (unless
// Config.DisableExtendedConnect); HTTP/3 sends the same setting (RFC 9220;
// TransportEnv.ExtendedConnect). Routes of websocket.Handler and
// websocket.Events take the mark as well: the server cannot tell what a
// handler does, and a route whose handler wraps another is the wrapper's. It
// returns r.
func (r *Route) ExtendedConnect() *Route {
	if r.method != http.MethodGet {
		panic("celeris: ExtendedConnect on " + r.method + " " + r.pattern + ": only a GET route serves extended CONNECT")
	}
	r.tunnel = true
	return r
}

// warnUnmarkedTunnel logs, once per route, a WebSocket switched over HTTP/1.1
// on a GET route without the ExtendedConnect mark, on a listener that speaks
// HTTP/2 and a server that would serve extended CONNECT: the route's WebSocket
// stays off HTTP/2 and HTTP/3.
func (c *Context) warnUnmarkedTunnel() {
	r := c.route
	if r == nil || r.tunnel || r.method != http.MethodGet || c.server == nil || c.server.cfg.DisableExtendedConnect {
		return
	}
	if c.server.cfg.DisableH2C && c.TLS() == nil {
		return // this listener speaks no HTTP/2
	}
	if atomic.CompareAndSwapUint32(&r.unmarkedLogged, 0, 1) {
		c.server.logger.Warn("celeris: a WebSocket route is not marked Route.ExtendedConnect: it serves WebSocket over HTTP/1.1 only", "route", r.method+" "+r.pattern)
	}
}

// extendedConnect reports whether HTTP/2 advertises SETTINGS_ENABLE_CONNECT_PROTOCOL
// (after freeze).
func (s *Server) extendedConnect() bool {
	if s.cfg.DisableExtendedConnect {
		return false
	}
	for _, r := range s.routes {
		if r.tunnel {
			return true
		}
	}
	return false
}

// lookupConnect routes an extended CONNECT to the tunnel route of path p (the GET
// route, when it is one) and reports whether it did. Other CONNECT requests are
// left to the router.
func (s *Server) lookupConnect(c *Context, p string) bool {
	if _, ok := c.isExtendedConnect(); !ok {
		return false
	}
	r, res, _ := s.router.Lookup(http.MethodGet, p, &c.params)
	if res == router.Found && r.tunnel {
		c.route = r
		return true
	}
	c.params.Reset()
	return false
}
