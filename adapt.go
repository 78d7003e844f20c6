package celeris

// net/http handlers and middleware inside Celeris.
//
// Life of an adapted request: Adapt builds an *http.Request from the Context
// (newNetRequest) and hands the handler an adaptWriter. The writer buffers the body
// up to adaptBufferSize; when the handler returns first, the response leaves as one
// complete response with a Content-Length through Context.Blob, exactly as a native
// handler's would (capture middleware such as compression sees it too). A Flush, or
// a body that outgrows the buffer, switches the writer to a streamed response
// (Context.Stream); from then on the buffer is pushed to the client whenever it fills
// and on every Flush, so no response is ever held whole in memory.

import (
	"net/http"
)

// adaptBufferSize is how much of an adapted handler's body is buffered before the
// response is streamed instead of sent whole with a Content-Length.
const adaptBufferSize = 32 << 10

// Adapt returns a HandlerFunc that runs the net/http handler h.
//
// The handler gets an *http.Request built from the Context: method, URL (from the
// request target; a path rewritten by SetPath replaces the URL's path), protocol,
// header (canonical names; Host moved to r.Host as net/http does), Host,
// RemoteAddr, ContentLength, Close, the Context's context.Context, and the route's
// parameters as path values (r.PathValue("id") for a ":id" route). Every string in
// it is a copy, so the handler may keep them as it would under net/http. The body
// streams from the connection, and may be read while the response is written
// (full duplex, on both protocols). As net/http documents, r.Trailer holds the
// trailer keys the request declared in its Trailer field (which leaves r.Header)
// from the start, and their values once the body has been read to io.EOF.
// Body.Close ends a Read blocked on another goroutine. Reading r.Body after the
// handler returned fails.
//
// The http.ResponseWriter buffers up to 32 KiB: a handler that returns before
// writing more (and without flushing) produces one complete response with a
// Content-Length, as fast as a native handler. Flush (http.Flusher, or
// http.ResponseController) or a larger body switches to a streamed response
// (chunked on HTTP/1.1, DATA frames on HTTP/2): from then on buffered bytes reach
// the client whenever 32 KiB accumulate and at every Flush. A missing Content-Type
// is sniffed from the first bytes, as net/http does.
//
// Differences from net/http's own server:
//   - Framing is Celeris's: Content-Length, Transfer-Encoding, Connection,
//     Keep-Alive, Proxy-Connection, Upgrade and Date set by the handler are dropped.
//     A HEAD response therefore carries the length of the body the handler wrote
//     (0 when it wrote none), not a Content-Length it set by hand.
//   - Informational responses (WriteHeader with 1xx: 103 Early Hints, 100) are
//     sent as net/http sends them, with the header's fields at that moment,
//     except to HTTP/1.0 clients. WriteHeader(101) is held for a Hijack, which
//     writes it first.
//   - http.Hijacker works on HTTP/1.1 before the response was written (or
//     after WriteHeader(101), as WebSocket libraries do), on routes that run on
//     a worker (not Inline); on HTTP/2 Hijack reports http.ErrNotSupported, as
//     net/http's HTTP/2 server has no Hijacker.
//   - Response trailers work as in net/http: names declared in a Trailer header
//     before the body, or http.TrailerPrefix keys set at any time. A response
//     with trailers is always streamed (chunked on HTTP/1.1, as net/http does
//     for declared trailers), also when net/http would send a small one with a
//     Content-Length and lose its TrailerPrefix trailers. Fields that may not be
//     trailers (RFC 9110 §6.5.1: Content-Length, Content-Type, Set-Cookie,
//     Authorization, Cache-Control, ...) are dropped.
//   - EnableFullDuplex of http.ResponseController returns nil without changing
//     anything: the body stays readable after the response started, on both
//     protocols. (On HTTP/1.1 a body with a Content-Length up to 64 KiB is read
//     whole before the handler runs; chunked and larger bodies stream.)
//     SetReadDeadline and SetWriteDeadline report http.ErrNotSupported.
//   - Body.Close leaves the rest of the body unread: on HTTP/1.1 the connection
//     then closes after the response unless the body had arrived whole.
//
// A status code outside 100-999 panics, as in net/http; the panic becomes a 500.
//
// A handler that also implements NativeHandler (the gRPC server of
// github.com/celeris-dev/celeris/grpc does) is not adapted: Adapt returns its
// ServeCeleris method, which serves the request on the Context directly.
func Adapt(h http.Handler) HandlerFunc {
	if h == nil {
		panic("celeris: Adapt of a nil http.Handler")
	}
	if nh, ok := h.(NativeHandler); ok {
		return nh.ServeCeleris
	}
	return func(c *Context) error {
		r, body := newNetRequest(c, c.Context())
		w := acquireAdaptWriter(c, r.Method == http.MethodHead)
		h.ServeHTTP(w, r)
		body.close()
		err := w.finish()
		releaseAdaptWriter(w)
		return err
	}
}

// NativeHandler is implemented by an http.Handler that can also serve a request
// on a Celeris Context, faster than through the *http.Request and
// http.ResponseWriter that Adapt builds. Adapt(h) returns h.ServeCeleris when h
// implements it, so one value mounts under net/http (ServeHTTP) and natively
// under Celeris (celeris.Adapt(h)) alike. ServeCeleris is a HandlerFunc: the
// same rules apply (it answers through c, and everything borrowed from c is
// valid until it returns). Both methods must serve the same resource.
type NativeHandler interface {
	http.Handler
	ServeCeleris(c *Context) error
}

// AdaptFunc is Adapt for a function.
func AdaptFunc(f http.HandlerFunc) HandlerFunc {
	if f == nil {
		panic("celeris: AdaptFunc of a nil http.HandlerFunc")
	}
	return Adapt(f)
}
