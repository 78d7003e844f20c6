// Package recovery turns a panic in the handler chain into an error response.
//
// The server already recovers panics (a 500, logged). This middleware exists to
// customise that: it logs the panic value and the stack once, through log/slog, then
// lets Config.Handler choose the answer; by default a *celeris.HTTPError 500, which
// the server's error handler writes. Put it first (s.Use(recovery.Default(), ...))
// so that it covers every other middleware.
//
// A panic after the response was written (a streamed response) cannot change the
// answer: the error reaches the error handler, which leaves written responses alone.
package recovery

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// Logger receives one Error record per panic with method, path, the panic
	// value and the stack [slog.Default()].
	Logger *slog.Logger
	// Handler returns the error for a recovered panic; the server's error handler
	// turns it into the response. [returns a *celeris.HTTPError 500 whose Err
	// describes the panic]
	Handler func(c *celeris.Context, panicValue any) error
	// DisableStack leaves the stack out of the log record [false].
	DisableStack bool
	// StackSize is the most stack bytes logged [8 KiB].
	StackSize int
}

// Default returns the middleware with the default configuration.
func Default() celeris.MiddlewareFunc { return New(Config{}) }

// New returns the middleware.
func New(cfg Config) celeris.MiddlewareFunc {
	if cfg.Handler == nil {
		cfg.Handler = defaultHandler
	}
	if cfg.StackSize <= 0 {
		cfg.StackSize = 8 << 10
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) (err error) {
			defer func() {
				p := recover()
				if p == nil {
					return
				}
				logPanic(&cfg, c, p)
				err = cfg.Handler(c, p)
			}()
			return next(c)
		}
	}
}

func defaultHandler(_ *celeris.Context, p any) error {
	return &celeris.HTTPError{Code: http.StatusInternalServerError, Err: PanicError{Value: p}}
}

// PanicError describes a recovered panic; the default Handler wraps it in the
// HTTPError it returns.
type PanicError struct {
	Value any // the value passed to panic
}

func (e PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Logged reports true: the middleware logged the panic, so the server's
// DefaultErrorHandler does not log it again (see celeris.HTTPError's Err).
func (PanicError) Logged() bool { return true }

// Unwrap returns the panic value when it is an error.
func (e PanicError) Unwrap() error {
	err, _ := e.Value.(error)
	return err
}

func logPanic(cfg *Config, c *celeris.Context, p any) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	attrs := []slog.Attr{
		slog.String("method", c.Method()),
		slog.String("path", c.Path()),
		slog.Any("panic", p),
	}
	if !cfg.DisableStack {
		buf := make([]byte, cfg.StackSize)
		buf = buf[:runtime.Stack(buf, false)]
		attrs = append(attrs, slog.String("stack", string(buf)))
	}
	logger.LogAttrs(c.Context(), slog.LevelError, "recovery: handler panic", attrs...)
}
