package celeris

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/h1"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// HTTPError is an error with an HTTP status. Handlers return it; the server's error
// handler turns it into a response.
type HTTPError struct {
	Code    int    // HTTP status code
	Message string // response body; http.StatusText(Code) when empty
	// Err is the internal cause, never sent. DefaultErrorHandler logs it once: at
	// Error level when Code is 5xx (a failed template, a wrapped server fault), at
	// Debug level below (a client's bad input is not the server's fault, and
	// logging each at Error would let clients flood the log); not when an error in
	// its chain has a Logged() bool method that returns true (it was logged where
	// it arose, as the recovery middleware's PanicError).
	Err error
}

// NewHTTPError returns an HTTPError with the given status and message.
func NewHTTPError(code int, message string) *HTTPError {
	return &HTTPError{Code: code, Message: message}
}

// Error is "code message: cause"; the cause is left out when the message already
// holds its text (Bind's and BindJSON's messages quote their cause), so it is
// never printed twice.
func (e *HTTPError) Error() string {
	msg := e.message()
	if e.Err != nil {
		if cause := e.Err.Error(); !strings.Contains(msg, cause) {
			return strconv.Itoa(e.Code) + " " + msg + ": " + cause
		}
	}
	return strconv.Itoa(e.Code) + " " + msg
}

// Unwrap returns the internal cause.
func (e *HTTPError) Unwrap() error { return e.Err }

func (e *HTTPError) message() string {
	if e.Message != "" {
		return e.Message
	}
	return http.StatusText(e.Code)
}

// Errors returned by Context methods. Callers branch on them with errors.Is.
var (
	// ErrResponseWritten: a second response was attempted for one request.
	ErrResponseWritten = errors.New("celeris: response already written")
	// ErrInvalidRedirectCode: Redirect was called with a status outside 300-308.
	ErrInvalidRedirectCode = errors.New("celeris: invalid redirect status code")
	// ErrBodyAborted: reading an HTTP/1.x request body (BodyReader, Body) failed
	// because the connection closed, or the client's input ended, before the body
	// was complete.
	ErrBodyAborted = h1.ErrBodyAborted
	// ErrInformationalStatus: WriteInformational was called with a status outside
	// 100-199, or with 101 (a protocol switch belongs to Upgrade).
	ErrInformationalStatus = httpmsg.ErrInformational
	// ErrInlineOutput: StreamWriter.Write on an Inline route whose streamed
	// response would pass InlineStreamMax bytes. The response is broken off
	// (HTTP/1.1: no last chunk, and the connection closes; HTTP/2: RST_STREAM
	// INTERNAL_ERROR) and the event is logged once. Remove Inline from the
	// route to stream more: a worker's writes wait for the client instead.
	ErrInlineOutput = errors.New("celeris: an Inline route cannot stream more than " +
		strconv.Itoa(InlineStreamMax) + " bytes (InlineStreamMax); remove Inline from the route")
)

// Errors the router hands the error handler (as Echo's do). Compare them with
// errors.Is or read their Code with errors.As; never modify them.
var (
	// ErrNotFound: no route matches the path (404), unless Server.NotFound is set.
	ErrNotFound = &HTTPError{Code: http.StatusNotFound}
	// ErrMethodNotAllowed: routes match the path for other methods only (405; the
	// Allow header is set), unless Server.MethodNotAllowed is set.
	ErrMethodNotAllowed = &HTTPError{Code: http.StatusMethodNotAllowed}
)

// ErrorHandler turns an error returned by a handler into a response.
type ErrorHandler func(c *Context, err error)

// DefaultErrorHandler answers *HTTPError with its status and message, and any other
// error with 500 (the error itself is logged, never sent). An *HTTPError's Err is
// logged as its doc says: Error level for 5xx, Debug level below. When the
// request's Accept prefers application/problem+json it answers as
// ProblemErrorHandler does (RFC 9457); a returned *Problem is sent as text/plain
// otherwise.
func DefaultErrorHandler(c *Context, err error) {
	if c.Written() || problemFirst(c, err) {
		return
	}
	var he *HTTPError
	if errors.As(err, &he) {
		if he.Err != nil && !alreadyLogged(he.Err) {
			level := slog.LevelDebug
			if he.Code >= 500 {
				level = slog.LevelError
			}
			c.server.logger.Log(c.Context(), level, "celeris: handler error", "method", c.Method(), "path", c.Path(),
				"status", he.Code, "error", he.Err)
		}
		_ = c.Blob(he.Code, textPlain, bytesconv.S2B(he.message()))
		return
	}
	// Protocol errors met while reading a streamed body carry their status.
	if code := errorStatus(err); code != http.StatusInternalServerError {
		_ = c.Blob(code, textPlain, bytesconv.S2B(http.StatusText(code)))
		return
	}
	c.server.logger.Error("celeris: handler error", "method", c.Method(), "path", c.Path(), "error", err)
	_ = c.Blob(http.StatusInternalServerError, textPlain, bytesconv.S2B("Internal Server Error"))
}

// alreadyLogged reports whether err's chain says it was logged (see HTTPError.Err).
func alreadyLogged(err error) bool {
	var l interface{ Logged() bool }
	return errors.As(err, &l) && l.Logged()
}

// textPlain is the Content-Type of the server's own answers; it replaces one the
// handler set for the answer it did not send.
const textPlain = "text/plain; charset=utf-8"

// errorStatus is the status DefaultErrorHandler answers err with: an *HTTPError's
// code, the status of an error that carries one (StatusCode() int, e.g. a refused
// streamed body), else 500.
func errorStatus(err error) int {
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Code
	}
	var sc interface{ StatusCode() int }
	if errors.As(err, &sc) {
		if code := sc.StatusCode(); code >= 400 && code < 600 {
			return code
		}
	}
	return http.StatusInternalServerError
}

// ResultStatus is the status of c's response once the chain returned err, for
// middleware that reports it (logging, metrics): the status written; else, when err
// is not nil, the status DefaultErrorHandler gives it; else the status set with
// Status (200 when none), as the server answers then.
func (c *Context) ResultStatus(err error) int {
	if !c.Written() && err != nil {
		return errorStatus(err)
	}
	if code := c.StatusCode(); code != 0 {
		return code
	}
	return http.StatusOK
}
