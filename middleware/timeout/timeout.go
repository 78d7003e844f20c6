// Package timeout bounds the time a handler may take.
//
// The middleware gives the rest of the chain a context.Context with a deadline
// (c.SetContext), so that c.Context() is cancelled after Config.Timeout, and it
// captures the response (c.BeginCapture). When the chain returns, one of two things
// happens:
//
//   - the deadline has not passed: the captured response is sent as it was;
//   - the deadline has passed: the captured response (and any error the handler
//     returned, typically context.DeadlineExceeded) is discarded, the headers the
//     handler set are dropped, and the middleware returns a 503 *celeris.HTTPError
//     with Config.Message, which the server's error handler answers (so an API
//     answers it in its own format), or whatever Config.OnTimeout answers. Headers
//     set before the middleware ran (e.g. X-Request-ID) are kept.
//
// # The trade-off: the answer comes when the handler returns
//
// The 503 is sent when the handler returns, not at the deadline itself. A handler
// that honours its context (database drivers, net/http clients, time.After selects
// on c.Context().Done()) returns right after the deadline, so the client gets the
// 503 on time. A handler that ignores the context delays the 503 until it finishes.
//
// Answering at the deadline would mean running the handler on another goroutine and
// returning while it still runs. The *celeris.Context is pooled: the server reuses
// it for another request as soon as the chain returns, so a handler still holding it
// would read and write someone else's request. Copying the request first would cost
// allocations on every request and still leave the handler's writes nowhere to go.
// This middleware therefore runs the handler on the request's own goroutine and
// never returns while it runs; make handlers context-aware to get timely answers.
//
// Streamed responses (c.Stream) are not captured: once streaming started, the
// response stands even when the deadline passes.
//
// Cost: the context and its timer (context.WithTimeout): a few allocations per
// request, and no goroutine. The deadline context derives from the request's own
// context, so a client that leaves (or a shutdown) cancels it too; the request
// contexts of HTTP/1.1 (context.WithCancel) and HTTP/2 (with an AfterFunc method)
// are of the kinds that context.WithTimeout links to without a goroutine of its
// own, and they stay valid after the request, so nothing needs joining.
package timeout

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// Timeout is the time the rest of the chain may take [5s].
	Timeout time.Duration
	// Message is the body of the 503 answer ["Service Unavailable"].
	Message string
	// OnTimeout, when set, answers a timed-out request instead of the 503; it runs
	// after the handler's response and headers were discarded [nil].
	OnTimeout func(c *celeris.Context) error
}

// DefaultTimeout is Config.Timeout's default.
const DefaultTimeout = 5 * time.Second

// New returns the middleware.
func New(cfg Config) celeris.MiddlewareFunc {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Message == "" {
		cfg.Message = http.StatusText(http.StatusServiceUnavailable)
	}
	timedOut := celeris.NewHTTPError(http.StatusServiceUnavailable, cfg.Message)
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			parent := c.Context()
			ctx, cancel := context.WithTimeout(parent, cfg.Timeout)
			defer cancel()
			kept := headerCount(c)
			c.SetContext(ctx)
			status, body, ok, err := c.CaptureResponse(next)
			c.SetContext(parent)
			if errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil && (ok || !c.Written()) {
				keepHeaders(c, kept)
				if cfg.OnTimeout != nil {
					return cfg.OnTimeout(c)
				}
				return timedOut
			}
			if !ok {
				return err
			}
			if werr := c.Blob(status, "", body); werr != nil {
				return werr
			}
			return err
		}
	}
}

func headerCount(c *celeris.Context) int {
	n := 0
	c.VisitResponseHeaders(func(string, string) { n++ })
	return n
}

// keepHeaders drops every response header but the first n (those set before the
// handler ran). Timeouts are rare: this path may allocate.
func keepHeaders(c *celeris.Context, n int) {
	var kept [][2]string
	c.VisitResponseHeaders(func(name, value string) {
		if len(kept) < n {
			kept = append(kept, [2]string{name, value})
		}
	})
	c.ResetHeaders()
	for _, h := range kept {
		c.AddHeader(h[0], h[1])
	}
	c.Status(0)
}
