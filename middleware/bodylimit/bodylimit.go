// Package bodylimit refuses request bodies larger than a limit with 413 Content Too
// Large (RFC 9110 §15.5.14).
//
// A request that declares its length (Content-Length) above the limit is refused
// before any of its body is read. A body of unknown length (HTTP/1.1 chunked, or
// HTTP/2 without content-length) is read with c.Body() and then measured: the
// server's own Config.MaxRequestBodySize bounds that read and applies first, so a
// larger body is refused by the server (413) whatever this limit says. After the
// middleware, c.Body() returns the buffered body without reading again.
//
// Use it to give routes a tighter limit than the server's (uploads aside, most
// JSON APIs need far less than the 4 MiB default):
//
//	api := s.Group("/api", bodylimit.New(bodylimit.Config{Limit: 64 << 10}))
//
// Requests without a body pass without cost.
package bodylimit

import (
	"net/http"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// Limit is the largest body, in bytes, that passes [1 MiB].
	Limit int64
	// Message is the body of the 413 answer ["Content Too Large"].
	Message string
}

// DefaultLimit is Config.Limit's default.
const DefaultLimit = 1 << 20

// New returns the middleware.
func New(cfg Config) celeris.MiddlewareFunc {
	if cfg.Limit <= 0 {
		cfg.Limit = DefaultLimit
	}
	if cfg.Message == "" {
		cfg.Message = "Content Too Large"
	}
	tooLarge := celeris.NewHTTPError(http.StatusRequestEntityTooLarge, cfg.Message)
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			switch n := c.ContentLength(); {
			case n > cfg.Limit:
				return tooLarge
			case n < 0: // unknown length: buffer (bounded by the server's limit), then measure
				b, err := c.Body()
				if err != nil {
					return err
				}
				if int64(len(b)) > cfg.Limit {
					return tooLarge
				}
			}
			return next(c)
		}
	}
}
