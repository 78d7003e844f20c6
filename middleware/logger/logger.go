// Package logger writes one log/slog record per request.
//
// Each record, with message "request", holds: method, path, route (the matched
// pattern, "/users/:id"; absent when no route matched), status, latency, bytes
// (the response body bytes written, celeris.Context.BytesWritten: the
// uncompressed size when compression runs outside the logger) and, when known, the
// request id (the string stored under "request_id" by middleware/requestid, or else
// the X-Request-ID response header) and the error the handler returned; then the
// attributes Config.Attrs returns.
//
// Latency is a time.Duration attribute (slog.Duration): slog.TextHandler writes it
// as a duration string ("1.52ms"), slog.JSONHandler as integer nanoseconds, and
// handlers that know durations (OpenTelemetry bridges) keep the type; a
// ReplaceAttr can turn it into float milliseconds where a backend wants that.
//
// Status: the record holds the status the client got. When the chain returns an
// error and nothing was written, the logger runs the server's error handler at
// once (celeris.Context.Error), so the status is the one that handler chose (a
// custom handler's 422, say), and the server does not run it again.
//
// Put the logger after requestid and recovery (s.Use(recovery.Default(),
// requestid.Default(), logger.Default())) so that it sees the id and the status
// of recovered panics.
//
// Cost: a clock read at each end and the record itself (the slog handler formats
// and writes it). Skip drops records cheaply, e.g. for health checks.
package logger

import (
	"log/slog"
	"strings"
	"time"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// Logger receives the records [slog.Default()].
	Logger *slog.Logger
	// Level is the level of every record [slog.LevelInfo].
	Level slog.Level
	// Skip, when it returns true, writes no record for the request [nil].
	Skip func(c *celeris.Context) bool
	// Message is the record's message ["request"].
	Message string
	// Attrs, when set, adds attributes taken from the request to each record
	// (a user id stored by authentication middleware, a tenant, a trace id). It
	// runs after the handler. Strings from the Context are borrowed: clone them
	// (strings.Clone) when the slog handler may keep the record. [nil]
	Attrs func(c *celeris.Context) []slog.Attr
}

// Default returns the middleware with the default configuration.
func Default() celeris.MiddlewareFunc { return New(Config{}) }

// New returns the middleware.
func New(cfg Config) celeris.MiddlewareFunc {
	if cfg.Message == "" {
		cfg.Message = "request"
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			logger := cfg.Logger
			if logger == nil {
				logger = slog.Default() // read per request: slog.SetDefault may change it
			}
			if (cfg.Skip != nil && cfg.Skip(c)) || !logger.Enabled(c.Context(), cfg.Level) {
				return next(c)
			}
			start := time.Now()
			err := next(c)
			c.Error(err) // the error handler answers now: log the status sent
			latency := time.Since(start)

			// The request's strings point into buffers the next request reuses,
			// and a slog.Handler may keep the record (async or in-memory handlers):
			// log copies.
			attrs := [8]slog.Attr{
				slog.String("method", strings.Clone(c.Method())),
				slog.String("path", strings.Clone(c.Path())),
				slog.Int("status", Status(c, err)),
				slog.Duration("latency", latency),
				slog.Int64("bytes", c.BytesWritten()),
			}
			n := 5
			if rp := c.RoutePattern(); rp != "" {
				attrs[n] = slog.String("route", rp) // patterns are registered once: no copy
				n++
			}
			if id := requestID(c); id != "" {
				attrs[n] = slog.String("request_id", strings.Clone(id))
				n++
			}
			if err != nil {
				attrs[n] = slog.String("error", err.Error())
				n++
			}
			if cfg.Attrs != nil {
				logger.LogAttrs(c.Context(), cfg.Level, cfg.Message, append(attrs[:n:n], cfg.Attrs(c)...)...)
				return err
			}
			logger.LogAttrs(c.Context(), cfg.Level, cfg.Message, attrs[:n]...)
			return err
		}
	}
}

// Status is the status of c's response once the chain returned err; see
// celeris.Context.ResultStatus.
func Status(c *celeris.Context, err error) int { return c.ResultStatus(err) }

func requestID(c *celeris.Context) string {
	if v, ok := c.Get("request_id"); ok {
		if s, ok := v.(string); ok {
			return s
		}
	}
	return c.ResponseHeader("X-Request-ID")
}
