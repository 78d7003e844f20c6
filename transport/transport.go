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

// ValidInformational reports whether status may be sent as an informational
// (1xx) response: 100-199, not 101.
func ValidInformational(status int) bool { return httpmsg.ValidInformational(status) }

// ClearFields zeroes f's strings, so that a reused slice keeps no old request
// alive.
func ClearFields(f []Field) { httpmsg.ClearFields(f) }

// Date returns the current IMF-fixdate for the Date field, refreshed once a
// second for every protocol of the process. The slice is never modified: it
// may be kept.
func Date() []byte { return bytesconv.Date() }

// NewWorkerPool returns a pool that keeps at most max live workers (0: no
// bound) and retires workers idle for longer than expiry.
func NewWorkerPool(max int, expiry time.Duration) *WorkerPool { return work.NewPool(max, expiry) }
