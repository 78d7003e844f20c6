// Package httpmsg is the protocol-neutral request/response model that sits between
// the protocol layers (internal/h1, internal/h2) and the framework (the root package).
//
// A protocol fills a Request from the bytes it parsed and hands it, together with a
// ResponseWriter it implements, to a Handler. The framework never learns which protocol
// carries the request.
//
// Life of a request across this seam:
//
//  1. On the event loop, the protocol parses a request head and fills *Request. Every
//     string in it is owned by the request (copied out of the engine's read buffer, or a
//     string produced by HPACK), so it stays valid after the loop returns.
//  2. Still on the loop, the protocol calls Handler.Prepare, which routes the request and
//     reports whether its handler may run inline on the loop.
//  3. The protocol calls Handler.Serve, inline or on a pooled worker goroutine (see
//     internal/work). Serve answers through the ResponseWriter exactly once (a complete
//     response with WriteResponse, or a streamed one with WriteHeader/Write/Flush/End,
//     whose End carries the trailers). Before that answer, a writer that implements
//     InformationalWriter may send any number of interim (1xx) responses. A streamed
//     request body (BodyReader) may be read while the response is written (full
//     duplex); when it is an io.Closer, Close ends a Read blocked on another goroutine.
//  4. The protocol turns the answer into bytes on the loop that owns the connection.
//
// Lifetimes: a Request and every string, slice and reader in it are valid until Serve
// returns; after that the protocol recycles them. Keep a copy (strings.Clone) of anything
// needed later.
package httpmsg

import (
	"crypto/tls"
	"errors"
	"io"
	"net"

	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/directrun"
)

// ErrUpgrade is returned by Proto.OnData when the connection switches protocol
// (HTTP/1.1 Upgrade: h2c). The engine then asks the protocol for the upgrade.
var ErrUpgrade = errors.New("httpmsg: protocol upgrade")

// Field is one header (or trailer) field. For HTTP/2 the name is lower case; for
// HTTP/1.1 it is as received. Compare names case-insensitively.
type Field struct {
	Name  string
	Value string
}

// ClearFields zeroes f's strings (so that a reused slice keeps no old request
// alive). A request has a few fields: storing empty strings one by one costs a
// fraction of clear's call into memclrHasPointers and its write-barrier check.
func ClearFields(f []Field) {
	for i := range f {
		f[i].Name = ""
		f[i].Value = ""
	}
}

// Request is the protocol-neutral view of one request.
// Every field is valid until Handler.Serve returns.
type Request struct {
	Method     string // request method token, e.g. "GET"
	Path       string // path part of the request target, not decoded, no query
	RawQuery   string // query string without '?', not decoded
	RequestURI string // the request target as received (h1) or :path (h2)
	Proto      string // "HTTP/1.0", "HTTP/1.1" or "HTTP/2.0"
	ProtoMajor int
	ProtoMinor int
	Host       string // Host header (h1) or :authority (h2)
	Scheme     string // "http" (h2 :scheme, or "http" for h1)

	Header  []Field // regular header fields in arrival order
	Trailer []Field // trailer fields, filled once the body has been read

	// ContentLength is the declared body length, or -1 when unknown (chunked, or h2
	// without content-length). 0 means no body.
	ContentLength int64
	// Body holds the complete request body when BodyReader is nil.
	Body []byte
	// BodyReader, when non-nil, streams the body as it arrives; Body is then nil.
	BodyReader io.Reader

	RemoteAddr net.Addr
	StreamID   uint32 // HTTP/2 stream id; 0 for HTTP/1.x

	// TLS is the connection's TLS state (see TLSConn), nil for plaintext. Every
	// request of the connection shares it: read only.
	TLS *tls.ConnectionState

	// Close reports that the connection will be closed after this response
	// (HTTP/1.x only: Connection: close, or HTTP/1.0 without keep-alive).
	Close bool

	// Route is opaque state the Handler stores in Prepare for Serve to use.
	Route any

	// InPlace is the record of the request's route (directrun.Record), which
	// Prepare points here: a protocol whose engine runs handlers in place
	// (DirectRunner) runs the request on a worker when it says the handler
	// waits, and tells it how a run in place went (Moved, Ran). nil: nothing is
	// learnt, and the request may run in place.
	InPlace *directrun.Record

	// MoveToWorker is set by Serve, on the event loop, when it recorded a
	// response that would have to wait for the client (see LoopWriter) instead
	// of writing it: the protocol must then dispatch the request to a worker and
	// call Serve again there with the same Request and writer, before it
	// recycles either. Serve clears it on that second call. Protocols without
	// LoopWriter never see it set.
	MoveToWorker bool

	// Counted reports that the protocol counts this request in the server's
	// active-request gauge itself (once for a whole batch of pipelined requests,
	// instead of two atomic additions per request): Serve must not count it.
	Counted bool

	// KeepsSpare reports that the protocol serves request after request from this
	// Request value and keeps Spare between them (HTTP/1.x's exchanges, recycled
	// per connection). Only then may Serve leave a Spare; otherwise it would be
	// lost with the value.
	KeepsSpare bool

	// Spare is what the Handler left for the next request this Request value
	// carries (a request context, instead of a round trip through a sync.Pool).
	// The protocol never looks into it: it keeps it when it clears the rest of the
	// Request, and calls its Recycle when it drops the value for good (the
	// connection closed or switched protocols).
	Spare Spare
}

// Spare is state a Handler keeps with a Request value between requests
// (Request.Spare). Recycle hands it back to the Handler's own pool; the protocol
// calls it at most once, on the loop, and forgets the value.
type Spare interface {
	Recycle()
}

// Reset clears r for reuse, keeping the capacity of its slices.
func (r *Request) Reset() {
	h, t := r.Header[:0], r.Trailer[:0]
	*r = Request{Header: h, Trailer: t}
}

// DropMoved releases the response a Handler recorded for a worker (MoveToWorker,
// Dropper) when the protocol gives the request up without calling Serve again;
// a no-op for any other request. Protocols call it before they recycle or drop a
// Request.
func (r *Request) DropMoved() {
	if !r.MoveToWorker {
		return
	}
	r.MoveToWorker = false
	if d, ok := r.Route.(Dropper); ok {
		d.Drop()
	}
	r.Route = nil
}

// HeaderValue returns the value of the first field named name (case-insensitive).
func (r *Request) HeaderValue(name string) (string, bool) {
	for i := range r.Header {
		if EqualFold(r.Header[i].Name, name) {
			return r.Header[i].Value, true
		}
	}
	return "", false
}

// ResponseWriter is the sink a protocol gives the framework for one request.
//
// A handler answers with exactly one of: WriteResponse (complete response), or
// WriteHeader followed by any number of Write/Flush calls and then End (streamed
// response). Header fields and byte slices passed in are borrowed only for the duration
// of the call. The writer adds Date, Content-Length (or chunked framing) and
// Connection fields itself; the caller must not pass them.
type ResponseWriter interface {
	// WriteResponse sends a complete response with the given body. A HEAD request, a
	// 1xx, 204 or 304 status gets no body on the wire.
	WriteResponse(status int, header []Field, body []byte) error
	// WriteHeader starts a streamed response of unknown length.
	WriteHeader(status int, header []Field) error
	// Write queues body bytes of a streamed response. It may block when the client
	// reads slower than the handler writes (backpressure); never on the event loop.
	Write(p []byte) (int, error)
	// Flush pushes what was written so far to the client.
	Flush() error
	// End finishes a streamed response, with optional trailers.
	End(trailer []Field) error
}

// Switcher is implemented by a ResponseWriter whose transport can change protocol
// after the response head: an HTTP/1.1 connection after 101 Switching Protocols
// (RFC 9110 §7.8, §15.2.2), an HTTP/2 stream opened by an extended CONNECT (RFC
// 8441 §5). Switch answers (101 on HTTP/1.1, 200 on HTTP/2) with header and, once
// that answer is written, serves the transport's further bytes with the Proto
// that newProto returns; newProto runs on the event loop. It fails when the
// request did not ask to switch (no Upgrade on HTTP/1.1) or was already answered.
type Switcher interface {
	Switch(header []Field, newProto func(c Conn) Proto) error
}

// Hijacker is implemented by a Conn that can leave the engine (HTTP/1.1
// http.Hijacker): Hijack, on the loop only, returns the connection as a net.Conn
// served by the Go runtime, the input bytes already read and not consumed, and
// the output still owed (to write first). The engine forgets the connection: the
// protocol gets neither OnClose nor more calls, and its Conn must not be used.
// The HTTP/1.1 exchange (a ResponseWriter) implements it too, for its handler:
// from a worker it asks the loop and waits, and fails when the connection
// closes first.
type Hijacker interface {
	Hijack() (nc net.Conn, buffered, pending []byte, err error)
}

// Task is a unit of handler work a protocol hands off (a worker pool's task).
type Task interface {
	Run()
}

// DirectRunner is implemented by a Conn whose engine can run a handler on the
// goroutine that runs the loop (the std engine's connection goroutine, an epoll
// loop's) instead of a worker's: no hand-off to a pool and back per request.
//
// The contract, for the protocol and every engine:
//   - RunDirect (loop only, from OnData or OnWake) asks the engine to run t on
//     the loop's goroutine once the current callback returned; false means it
//     cannot now (the protocol uses its pool).
//   - While t runs undetached, the loop does not: t must not wait for it. A
//     Wake of the connection while t runs detaches t (as Detach does): the loop
//     goes on in another goroutine, and t stays where it is, a worker's task in
//     every respect from then on. So output handed over before the end, an
//     interim answer, a hijack, anything t hands the loop with a Wake, never
//     waits for t to end.
//   - The engine detaches by itself a t that runs for more than a short while
//     (the engine's watch: at most twice directrun.Period), so that a client
//     that leaves is seen and cancels its context, and the loop's other
//     connections are served.
//   - Whenever the loop moves off t (a Wake, Detach, the watch), the protocol's
//     OnWake runs on the loop's new goroutine soon after, so that what t
//     produced on the loop's behalf before it moved goes out.
//   - After t returns, the engine runs the protocol's OnWake for the connection:
//     on the loop's goroutine at once when t was not detached, by a wake-up
//     when it was. A run's final hand-off therefore needs no Wake (and should
//     not Wake: that would detach a run about to end).
type DirectRunner interface {
	RunDirect(t Task) bool
	// Detach is a no-op when t is not running directly (or was detached).
	Detach()
}

// MoveObserver is implemented by a Task that learns from its runs in place
// (Request.InPlace): when the loop moves off a direct run of it (a Wake,
// Detach, the watch), the engine calls Moved once, from the goroutine that
// moved it, before the loop goes on in another goroutine.
type MoveObserver interface {
	Moved()
}

// Handler is what the framework gives a protocol.
type Handler interface {
	// Prepare runs on the event loop once the request head is complete. It routes the
	// request (it may store state in req.Route) and reports whether Serve may run
	// inline on the loop. It must not block.
	Prepare(req *Request) (inline bool)
	// Serve runs the handler and answers through w. It runs on the loop when Prepare
	// said inline, otherwise on a worker goroutine. Serve must not keep req or w,
	// except when it returns on the loop with req.MoveToWorker set: the protocol
	// then calls it again, on a worker, to finish the response (LoopWriter).
	Serve(req *Request, w ResponseWriter)
}

// Conn is what a protocol sees of its connection: bytes to write, a wake-up, a close.
// The engine implements it; the protocols never see gnet.
type Conn interface {
	// Write appends b to the output batch of the current loop iteration. The batch
	// leaves in one write when the loop callback returns. Loop only; b is copied.
	Write(b []byte)
	// Wake asks the loop to call the protocol's OnWake soon. Safe from any goroutine;
	// wake-ups requested before the loop runs are coalesced into one.
	Wake()
	// Close closes the connection after the output batch is flushed. Loop only.
	Close()
	// RemoteAddr is the peer address.
	RemoteAddr() net.Addr
}

// OwnedWriter is implemented by a Conn that can take an output buffer over instead
// of copying it (the engine's does).
type OwnedWriter interface {
	// WriteOwned queues b as Write does, but may keep b itself instead of copying
	// it. The caller gives b up and gets back an empty buffer it owns from then on:
	// b[:0] when b was copied, another buffer when b was kept. Loop only.
	WriteOwned(b []byte) []byte
}

// WriteOwned queues b on c, handing the buffer over when c can take it (see
// OwnedWriter), and returns the empty buffer the caller owns from then on.
func WriteOwned(c Conn, b []byte) []byte {
	if ow, ok := c.(OwnedWriter); ok {
		return ow.WriteOwned(b)
	}
	c.Write(b)
	return b[:0]
}

// AppendOwned is an engine's WriteOwned on its output batch out: while out is
// empty, b becomes the batch and out's buffer goes back to the caller, so a
// response built in a protocol's buffer (a large body above all) is not copied
// once more; otherwise b is appended and b[:0] goes back. It returns the new
// batch and the caller's buffer.
func AppendOwned(out, b []byte) (batch, spare []byte) {
	if len(out) == 0 {
		return b, out[:0]
	}
	return append(out, b...), b[:0]
}

// Proto is one connection's protocol state machine. Every method is called on the
// connection's event loop, never concurrently.
type Proto interface {
	// OnData consumes bytes that arrived. in is valid only during the call: anything
	// kept must be copied. It returns how many bytes it consumed; the engine keeps the
	// rest and presents it again, followed by new bytes, on the next call. A non-nil
	// error closes the connection after the output batch is flushed.
	OnData(in []byte) (consumed int, err error)
	// OnWake drains work that handler goroutines handed back to the loop.
	OnWake() error
	// OnClose releases the connection's resources. err is nil on a clean close.
	OnClose(err error)
	// Busy reports whether a request is being served (a handler runs, or a response
	// or stream is unfinished). The engine applies the idle timeout only when a
	// connection is not busy and holds no partial request.
	Busy() bool
}

// EqualFold reports whether ASCII strings a and b are equal ignoring case
// (httpfield.EqualFold).
func EqualFold(a, b string) bool { return httpfield.EqualFold(a, b) }

// InformationalWriter is implemented by a ResponseWriter that can send
// informational (1xx) responses ahead of the final one (RFC 9110 §15.2): 103 Early
// Hints, or a 100 Continue the handler sends itself. The h1 exchange and the h2
// stream implement it.
type InformationalWriter interface {
	// WriteInformational sends an interim response with status (100-199, not
	// 101: a protocol switch is the final response of an Upgrade, and HTTP/2 has
	// none, RFC 9113 §8.6) and header. It may be called several times before the
	// final response starts, never after it (the protocol's "already answered"
	// error). An HTTP/1.0 client gets nothing (RFC 9110 §15.2: a server must not
	// send 1xx to it) and the call returns nil. The fields are borrowed for the
	// duration of the call; the writer adds no Date or framing field.
	WriteInformational(status int, header []Field) error
}

// ErrInformational is returned for a status WriteInformational may not send.
var ErrInformational = errors.New("httpmsg: informational status must be 100-199 and not 101")

// ValidInformational reports whether status may be sent with WriteInformational.
func ValidInformational(status int) bool {
	return status >= 100 && status < 200 && status != 101
}
