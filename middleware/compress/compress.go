// Package compress encodes responses with a content coding the client accepts:
// gzip here, and any Encoder registered beside it (the separate module
// github.com/celeris-dev/celeris/compress brings zstd and brotli, so that the
// core module needs no compression library besides the standard library's).
//
// The coding is negotiated from Accept-Encoding (RFC 9110 §12.5.3): each
// Encoder's q-value is the one its token is listed with ("x-gzip" counts as
// gzip), else the one of "*", else 0; an explicit "q=0" refuses the coding even
// when "*" is listed. The highest q wins; on a tie the server's preference
// (Config.Encoders' order) decides. When no coding has q > 0 the response goes
// out as it is.
//
// A whole response (Blob, String, JSON, ...) is captured (c.CaptureResponse)
// and encoded when all of these hold:
//
//   - the body has at least MinLength bytes;
//   - the status allows a body and is not 206 (a byte range of the identity
//     representation must not be re-encoded);
//   - the handler set no Content-Encoding (the body is already encoded);
//   - the Content-Type is compressible (not image/*, except SVG; not audio/* or
//     video/*; not an archive or an already compressed format, see Compressible).
//
// A body below about 100 bytes usually grows when compressed (gzip's framing is
// 18 bytes and short inputs compress poorly); MinLength keeps such bodies out by
// default.
//
// A streamed response (c.Stream, c.SSE, a flushing net/http handler through
// Adapt) is encoded as it is written, under the same rules except MinLength
// (its length is unknown): the middleware hands the Context a StreamEncoding
// (c.EncodeStream), and each Flush flushes the encoder first (gzip's sync
// flush, a zstd block, a brotli metablock), so the client decodes every
// flushed piece, an SSE event say, when it arrives rather than at the end.
// A stream with a declared length (c.StreamLength) is sent as it is.
//
// An encoded response gets Content-Encoding; a strong ETag set by the handler
// is made weak (the bytes changed, the meaning did not; a 304 to a client that
// accepts a coding gets the weak tag too), and any Content-Length the handler
// set is dropped (the server frames the new body). Every response that passes
// through the middleware gets "Vary: Accept-Encoding", whether or not it was
// encoded, so that shared caches keep the variants apart.
//
// Order with etag: etag outside compress (s.Use(etag.New(...), compress.New(...)))
// hashes the compressed bytes; compress outside etag weakens etag's strong tag.
// Both are correct.
//
// Cost: encoders' writers and output buffers come from pools (writers per
// Encoder, buffers per middleware); a request that accepts no coding is not
// captured and allocates nothing, nor does a gzipped one in steady state.
package compress

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// Level is the gzip level of the default gzip Encoder, gzip.BestSpeed (1) to
	// gzip.BestCompression (9), or gzip.HuffmanOnly (-2).
	// [gzip.DefaultCompression (-1), which is level 6]
	Level int
	// Encoders are the codings offered, in the server's order of preference
	// (it breaks ties between equal q-values). [the Encoders passed to
	// Register, in their order, then Gzip(Level) unless a gzip Encoder was
	// registered]
	Encoders []Encoder
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

// New returns the middleware. It panics on an invalid Level, and on an
// Encoders list with two Encoders for one coding.
func New(cfg Config) celeris.MiddlewareFunc {
	encs := cfg.Encoders
	if encs == nil {
		encs = Registered()
		if !slices.ContainsFunc(encs, func(e Encoder) bool { return strings.EqualFold(e.Coding(), "gzip") }) {
			encs = append(encs, Gzip(cfg.Level))
		}
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
	m := &middleware{minLength: minLength, compressible: compressible}
	m.codings = make([]coding, len(encs))
	for i, e := range encs {
		for _, prev := range encs[:i] {
			if strings.EqualFold(prev.Coding(), e.Coding()) {
				panic("compress: two Encoders for " + e.Coding())
			}
		}
		m.codings[i] = coding{enc: e, m: m}
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if cfg.Skip != nil && cfg.Skip(c) {
				return next(c)
			}
			c.AddHeader("Vary", "Accept-Encoding")
			i := m.pick(c.Header("Accept-Encoding"))
			if i < 0 {
				return next(c)
			}
			cd := &m.codings[i]
			c.EncodeStream(cd)
			status, body, ok, err := c.CaptureResponse(next)
			if !ok {
				// A stream (or no answer yet): end what the encoder holds
				// while the stream is still open.
				if w, ok := c.TakeStreamEncoder().(Writer); ok {
					if cerr := w.Close(); err == nil {
						err = cerr
					}
					cd.enc.Release(w)
				}
				return err
			}
			if status == http.StatusNotModified {
				weakenETag(c) // the 304 stands for the encoded variant, tagged weak
			}
			if len(body) < m.minLength || !m.encodable(c, status) {
				return send(c, status, body, err)
			}
			buf := cd.encode(body)
			defer func() {
				// An Inline route's body over 64 KiB is sent after the handler
				// returned (Context.Pending): buf stays borrowed till then.
				if !c.Pending() {
					m.release(buf)
				}
			}()
			c.DelHeader("Content-Length")
			c.SetHeader("Content-Encoding", cd.enc.Coding())
			weakenETag(c)
			return send(c, status, buf.Bytes(), err)
		}
	}
}

type middleware struct {
	codings      []coding
	minLength    int
	compressible func(string) bool
	buffers      sync.Pool // *bytes.Buffer
}

// coding is one Encoder of a middleware; it is the StreamEncoding the
// middleware gives the Context.
type coding struct {
	enc Encoder
	m   *middleware
}

// encodable reports whether a response with status and the headers set so far
// may be encoded.
func (m *middleware) encodable(c *celeris.Context, status int) bool {
	return bodyAllowed(status) && status != http.StatusPartialContent &&
		c.ResponseHeader("Content-Encoding") == "" && m.compressible(c.ResponseHeader("Content-Type"))
}

// Start starts a streamed response's encoder (celeris.StreamEncoding).
func (cd *coding) Start(c *celeris.Context, status int, dst io.Writer) celeris.StreamEncoder {
	if !cd.m.encodable(c, status) {
		return nil
	}
	c.DelHeader("Content-Length")
	c.SetHeader("Content-Encoding", cd.enc.Coding())
	weakenETag(c)
	return cd.enc.Acquire(dst)
}

// encode encodes a whole body into a pooled buffer.
func (cd *coding) encode(body []byte) *bytes.Buffer {
	buf, _ := cd.m.buffers.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	buf.Reset()
	if be, ok := cd.enc.(BodyEncoder); ok {
		buf.Grow(len(body) + 64) // room for most encoded bodies, incompressible ones included
		b := be.EncodeAll(body, buf.AvailableBuffer())
		if len(b) <= buf.Cap() {
			buf.Write(b) // into its own storage: no copy beyond the move
		} else {
			*buf = *bytes.NewBuffer(b)
		}
		return buf
	}
	w := cd.enc.Acquire(buf)
	_, _ = w.Write(body) // writes to a bytes.Buffer do not fail
	_ = w.Close()
	cd.enc.Release(w)
	return buf
}

func (m *middleware) release(buf *bytes.Buffer) {
	if buf.Cap() <= maxPooledBuffer {
		m.buffers.Put(buf)
	}
}

// weakenETag makes a strong ETag weak: the encoded bytes differ from the identity
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

// gzipEncoder is the built-in Encoder (Gzip).
type gzipEncoder struct {
	level   int
	writers sync.Pool // *gzip.Writer
}

// Gzip returns the gzip Encoder at level (0 means gzip.DefaultCompression). It
// panics on an invalid level.
func Gzip(level int) Encoder {
	if level == 0 {
		level = gzip.DefaultCompression
	}
	if _, err := gzip.NewWriterLevel(nil, level); err != nil {
		panic("compress: " + err.Error())
	}
	return &gzipEncoder{level: level}
}

func (g *gzipEncoder) Coding() string { return "gzip" }

func (g *gzipEncoder) Acquire(dst io.Writer) Writer {
	if w, _ := g.writers.Get().(*gzip.Writer); w != nil {
		w.Reset(dst)
		return w
	}
	w, _ := gzip.NewWriterLevel(dst, g.level) // the level was checked in Gzip
	return w
}

func (g *gzipEncoder) Release(w Writer) {
	if gw, ok := w.(*gzip.Writer); ok {
		gw.Reset(nil) // keeps no reference to the output
		g.writers.Put(gw)
	}
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
