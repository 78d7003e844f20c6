// Package transport is the seam between a celeris.Server and a transport
// written outside the core module (a celeris.Transport; HTTP/3 over QUIC,
// github.com/celeris-dev/celeris/http3, is one): the protocol-neutral request
// and response model that HTTP/1.1 and HTTP/2 serve the server's router,
// middleware and Context through, and the HTTP field rules they apply.
//
// A transport reads a request into a Request, calls the Handler that
// celeris.TransportEnv.Handler holds (Prepare, then Serve), and writes what
// the handler answers through its own ResponseWriter. The types are the ones
// the core's protocols use (declared as aliases here), so a transport behaves
// as they do; their fields and methods are documented where they are declared.
package transport

import (
	"time"

	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/work"
)

type (
	// Field is a header or trailer field: Name and Value.
	Field = httpmsg.Field
	// Request is a request as a protocol hands it to the Handler: method,
	// path, authority, header fields, body reader, remote address. Its
	// values are valid until Serve returns.
	Request = httpmsg.Request
	// ResponseWriter is what a transport gives the Handler to answer one
	// request: WriteHeader, Write, Flush, End (with trailers).
	ResponseWriter = httpmsg.ResponseWriter
	// Handler is the server's side of the seam: Prepare routes the request
	// (it must not block); Serve runs the route's middleware and handler and
	// answers through the ResponseWriter.
	Handler = httpmsg.Handler
	// ContextWriter is implemented by a ResponseWriter that gives the
	// request a context (canceled when the client goes away).
	ContextWriter = httpmsg.ContextWriter
	// SizedWriter is implemented by a ResponseWriter that takes a body's
	// length with its header (Content-Length), so that Write costs nothing
	// per call.
	SizedWriter = httpmsg.SizedWriter
	// InformationalWriter is implemented by a ResponseWriter that sends
	// 1xx responses (103 Early Hints, 100 Continue) ahead of the final one.
	InformationalWriter = httpmsg.InformationalWriter
	// Task is a unit of work a WorkerPool runs.
	Task = httpmsg.Task
	// WorkerPool runs Tasks on goroutines that outlive one task (their grown
	// stacks are kept): Submit, LimitIdle, Idle, Stop.
	WorkerPool = work.Pool
)

// ErrLength is the error of a SizedWriter whose body does not match the length
// it declared.
var ErrLength = httpmsg.ErrLength

// ErrInformational is the error of WriteInformational with a status that is not
// 100-199, or is 101.
var ErrInformational = httpmsg.ErrInformational

// CheckField checks a request field as HTTP/2 and HTTP/3 receive it (RFC 9113
// §8.2.1, RFC 9114 §4.2): a lower-case token name (after the ':' of a
// pseudo-header), a value without NUL, CR or LF and without leading or
// trailing whitespace, an authority without userinfo in :authority and Host.
// It returns "" for a valid field, otherwise why the request is malformed.
func CheckField(name, value string) string { return httpmsg.CheckField(name, value) }

// ValidResponseField reports whether a response field may be sent: its name is
// a token (RFC 9110 §5.1) and its value holds no CR, LF or NUL (RFC 9110 §5.5);
// the core's writers drop any other field (response splitting).
func ValidResponseField(name, value string) bool { return httpmsg.ValidResponseField(name, value) }

// ValidInformational reports whether status may be sent as an informational
// (1xx) response: 100-199, not 101.
func ValidInformational(status int) bool { return httpmsg.ValidInformational(status) }

// ForbiddenTrailer reports whether name must not be sent as a trailer field
// (RFC 9110 §6.5.1: framing, routing, authentication, control fields).
func ForbiddenTrailer(name string) bool { return httpmsg.ForbiddenTrailer(name) }

// ClearFields zeroes f's strings, so that a reused slice keeps no old request
// alive.
func ClearFields(f []Field) { httpmsg.ClearFields(f) }

// LowerTchar reports whether b is a token character (RFC 9110 §5.6.2) other
// than an upper-case letter: a byte of a field name as HTTP/2 and HTTP/3 send
// it.
func LowerTchar(b byte) bool { return httpmsg.LowerTchar[b] }

// Date returns the current IMF-fixdate for the Date field, refreshed once a
// second for every protocol of the process. The slice is never modified: it
// may be kept.
func Date() []byte { return bytesconv.Date() }

// NewWorkerPool returns a pool that keeps at most max live workers (0: no
// bound) and retires workers idle for longer than expiry.
func NewWorkerPool(max int, expiry time.Duration) *WorkerPool { return work.NewPool(max, expiry) }
