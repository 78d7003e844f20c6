// Package compress gzips responses for clients that accept it.
//
// The middleware captures the response (c.BeginCapture), then compresses the body
// with compress/gzip when all of these hold:
//
//   - the request's Accept-Encoding lists gzip (or x-gzip, or "*") with q > 0
//     (RFC 9110 §12.5.3; an explicit "gzip;q=0" refuses even when "*" is listed);
//   - the body has at least MinLength bytes;
//   - the status allows a body and is not 206 (a byte range of the identity
//     representation must not be re-encoded);
//   - the handler set no Content-Encoding (the body is already encoded);
//   - the Content-Type is compressible (not image/*, except SVG; not audio/* or
//     video/*; not an archive or an already compressed format, see Compressible).
//
// A body below about 100 bytes usually grows when gzipped (the gzip framing is 18
// bytes and short inputs compress poorly); MinLength keeps such bodies out by default.
//
// A compressed response gets Content-Encoding: gzip; a strong ETag set by the
// handler is made weak (the bytes changed, the meaning did not; a 304 to a client
// that accepts gzip gets the weak tag too), and any
// Content-Length the handler set is dropped (the server frames the new body). Every
// response that passes through the middleware gets "Vary: Accept-Encoding", whether
// or not it was compressed, so that shared caches keep the variants apart.
//
// Streamed responses (c.Stream) are not captured and go out uncompressed.
//
// Order with etag: etag outside compress (s.Use(etag.New(...), compress.New(...)))
// hashes the compressed bytes; compress outside etag weakens etag's strong tag.
// Both are correct.
//
// Cost: gzip writers and output buffers come from pools (one pool per middleware,
// since the level is per middleware); a request that does not accept gzip is not
// captured and allocates nothing.
package compress

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"strings"
	"sync"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// Level is the gzip level, gzip.BestSpeed (1) to gzip.BestCompression (9), or
	// gzip.HuffmanOnly (-2). [gzip.DefaultCompression (-1), which is level 6]
	Level int
	// MinLength is the smallest body, in bytes, worth compressing [256]. Bodies
	// below it are sent as they are. 0 means the default: use a negative value
	// (e.g. -1) to compress every body, even tiny or empty ones.
	MinLength int
	// Compressible decides by Content-Type (the full header value, possibly with
	// parameters, possibly "") whether to compress [Compressible].
	Compressible func(contentType string) bool
	// Skip, when it returns true, leaves the request alone (no capture, no Vary)
	// [nil].
	Skip func(c *celeris.Context) bool
}

// DefaultMinLength is Config.MinLength's default.
const DefaultMinLength = 256

// maxPooledBuffer bounds the output buffers kept for reuse.
const maxPooledBuffer = 1 << 20

// Default returns the middleware with the default configuration.
func Default() celeris.MiddlewareFunc { return New(Config{}) }

// New returns the middleware. It panics on an invalid Level.
func New(cfg Config) celeris.MiddlewareFunc {
	level := cfg.Level
	if level == 0 {
		level = gzip.DefaultCompression
	}
	if _, err := gzip.NewWriterLevel(nil, level); err != nil {
		panic("compress: " + err.Error())
	}
	minLength := cfg.MinLength
	switch {
	case minLength == 0:
		minLength = DefaultMinLength
	case minLength < 0:
		minLength = 0
	}
	compressible := cfg.Compressible
	if compressible == nil {
		compressible = Compressible
	}
	z := &zipper{level: level}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if cfg.Skip != nil && cfg.Skip(c) {
				return next(c)
			}
			c.AddHeader("Vary", "Accept-Encoding")
			if !AcceptsGzip(c.Header("Accept-Encoding")) {
				return next(c)
			}
			status, body, ok, err := c.CaptureResponse(next)
			if !ok {
				return err
			}
			if status == http.StatusNotModified {
				weakenETag(c) // the 304 stands for the gzip variant, tagged weak
			}
			if len(body) < minLength || !bodyAllowed(status) || status == http.StatusPartialContent ||
				c.ResponseHeader("Content-Encoding") != "" || !compressible(c.ResponseHeader("Content-Type")) {
				return send(c, status, body, err)
			}
			buf := z.compress(body)
			defer func() {
				// An Inline route's body over 64 KiB is sent after the handler
				// returned (Context.Pending): buf stays borrowed till then.
				if !c.Pending() {
					z.release(buf)
				}
			}()
			c.DelHeader("Content-Length")
			c.SetHeader("Content-Encoding", "gzip")
			weakenETag(c)
			return send(c, status, buf.Bytes(), err)
		}
	}
}

// weakenETag makes a strong ETag weak: the gzip bytes differ from the identity
// bytes the handler tagged (RFC 9110 §8.8.1), the content does not.
func weakenETag(c *celeris.Context) {
	if et := c.ResponseHeader("ETag"); et != "" && !strings.HasPrefix(et, "W/") {
		c.SetHeader("ETag", "W/"+et)
	}
}

// send writes the (transformed) captured response; the handler's error, if any,
// still goes to the error handler, which leaves the written response alone.
func send(c *celeris.Context, status int, body []byte, err error) error {
	if werr := c.Blob(status, "", body); werr != nil {
		return werr
	}
	return err
}

// bodyAllowed: RFC 9110 §15.2, §15.3.5, §15.4.5: 1xx, 204 and 304 have no content.
func bodyAllowed(status int) bool {
	return status >= 200 && status != http.StatusNoContent && status != http.StatusNotModified
}

type zipper struct {
	level   int
	writers sync.Pool // *gzip.Writer
	buffers sync.Pool // *bytes.Buffer
}

func (z *zipper) compress(body []byte) *bytes.Buffer {
	buf, _ := z.buffers.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	w, _ := z.writers.Get().(*gzip.Writer)
	if w == nil {
		w, _ = gzip.NewWriterLevel(buf, z.level) // the level was checked in New
	} else {
		w.Reset(buf)
	}
	_, _ = w.Write(body) // writes to a bytes.Buffer do not fail
	_ = w.Close()
	w.Reset(nil)
	z.writers.Put(w)
	return buf
}

func (z *zipper) release(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBuffer {
		z.buffers.Put(buf)
	}
}

// AcceptsGzip reports whether an Accept-Encoding value allows gzip: "gzip" or
// "x-gzip" with q > 0, or else "*" with q > 0 (RFC 9110 §12.5.3). It allocates
// nothing.
func AcceptsGzip(ae string) bool {
	star := false
	for ae != "" {
		var item string
		item, ae, _ = strings.Cut(ae, ",")
		coding, params, _ := strings.Cut(item, ";")
		coding = strings.TrimSpace(coding)
		switch {
		case strings.EqualFold(coding, "gzip"), strings.EqualFold(coding, "x-gzip"):
			return qPositive(params)
		case coding == "*":
			star = qPositive(params)
		}
	}
	return star
}

// qPositive reports whether the parameters of a list member give q > 0 (no q means
// q=1). A malformed q counts as 0.
func qPositive(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, value, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
		value = strings.TrimSpace(value)
		if value == "" || (value[0] != '0' && value[0] != '1') {
			return false
		}
		if value[0] == '1' {
			return true
		}
		for i := 1; i < len(value); i++ {
			if c := value[i]; c >= '1' && c <= '9' {
				return true
			}
		}
		return false
	}
	return true
}

// incompressible lists media types that are compressed already (by prefix).
var incompressible = []string{
	"image/", "audio/", "video/",
	"application/zip", "application/gzip", "application/x-gzip", "application/zstd",
	"application/x-bzip2", "application/x-xz", "application/x-7z-compressed",
	"application/x-rar-compressed", "application/vnd.rar", "application/pdf",
	"font/woff", "font/woff2", "application/font-woff",
	"application/octet-stream",
}

// Compressible is the default Config.Compressible: false for images (except
// image/svg+xml), audio, video, archives, compressed formats, PDF, WOFF fonts and
// application/octet-stream (whose content is unknown); true otherwise, including an
// empty Content-Type.
func Compressible(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	mt = strings.TrimSpace(mt)
	if hasPrefixFold(mt, "image/svg+xml") {
		return true
	}
	for _, p := range incompressible {
		if hasPrefixFold(mt, p) {
			return false
		}
	}
	return true
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
