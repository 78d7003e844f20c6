package celeris

import (
	"errors"
	"net/http"
)

// ErrDependency matches, with errors.Is, every *DependencyError: a request
// failed because a service it depends on (a session store, a rate limiter's
// store, a database) failed or did not answer in time.
var ErrDependency = errors.New("celeris: dependency unavailable")

// DependencyError reports that a dependency failed. The server's error handler
// answers it with 503 Service Unavailable (RFC 9110 §15.6.4: the server cannot
// handle the request now, the client may retry later) and logs Err once at Error
// level, unless Logged is true. It reads as an *HTTPError of Code 503 to
// errors.As, so an error handler written for *HTTPError maps it too, and
// errors.Is(err, ErrDependency) picks it out among a handler's errors.
//
// The session middleware and the rate limiter return it when their store fails.
type DependencyError struct {
	// Name names the dependency, for the log ("session store", "ratelimit store").
	Name string
	// Err is the dependency's error, never sent to the client.
	Err error
	// Logged says the error was already logged where it arose; the error
	// handler does not log it again.
	Logged bool
}

// Error is "celeris: <Name> unavailable: <Err>".
func (e *DependencyError) Error() string {
	msg := "celeris: " + e.Name + " unavailable"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the dependency's error.
func (e *DependencyError) Unwrap() error { return e.Err }

// Is reports whether target is ErrDependency.
func (e *DependencyError) Is(target error) bool { return target == ErrDependency }

// StatusCode is 503.
func (e *DependencyError) StatusCode() int { return http.StatusServiceUnavailable }

// As makes e an *HTTPError of Code 503 whose Err is e, for error handlers (the
// default one included) that branch on *HTTPError.
func (e *DependencyError) As(target any) bool {
	if p, ok := target.(**HTTPError); ok {
		*p = &HTTPError{Code: http.StatusServiceUnavailable, Err: dependencyCause{e}}
		return true
	}
	return false
}

// dependencyCause is a DependencyError as an HTTPError's cause: it reports
// Logged() for DefaultErrorHandler, and its Unwrap returns the DependencyError
// (not its As, which would make the HTTPError again).
type dependencyCause struct{ e *DependencyError }

func (d dependencyCause) Error() string { return d.e.Error() }
func (d dependencyCause) Unwrap() error { return d.e }
func (d dependencyCause) Logged() bool  { return d.e.Logged }
