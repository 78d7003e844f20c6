// Package etag adds entity tags to responses and answers conditional GETs with
// 304 Not Modified (RFC 9110 §8.8.3, §13.1.2).
//
// For a GET or HEAD answered 200, the middleware captures the body (c.BeginCapture)
// and, unless the handler set an ETag itself, sets one computed from the body:
// "<length in hex>-<CRC-32C in hex>", weak (W/"...") when Config.Weak is set. CRC-32C
// runs in hardware on amd64 and arm64 (many GB/s); together with the length it
// tells versions of a resource apart well, though it is no cryptographic hash.
//
// Then If-None-Match is evaluated against the ETag (the computed one or the
// handler's): "*" or any listed tag that matches by weak comparison (RFC 9110
// §8.8.3.2: W/ prefixes ignored) turns the answer into 304 with no body, keeping
// ETag, Cache-Control, Vary and the other headers, but dropping Content-Type
// and Content-Length.
//
// Other methods and statuses, and streamed responses, pass unchanged; the capture
// costs a copy of the body and the computed tag one small string.
package etag

import (
	"hash/crc32"
	"net/http"
	"strings"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// Weak makes computed tags weak (W/"...") [false: strong]. Use weak tags when
	// the same content may be sent in byte-different forms.
	Weak bool
}

// Default returns the middleware with strong tags.
func Default() celeris.MiddlewareFunc { return New(Config{}) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// New returns the middleware.
func New(cfg Config) celeris.MiddlewareFunc {
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if m := c.Method(); m != http.MethodGet && m != http.MethodHead {
				return next(c)
			}
			status, body, ok, err := c.CaptureResponse(next)
			if !ok {
				return err
			}
			if status == http.StatusOK {
				tag := c.ResponseHeader("ETag")
				if tag == "" {
					tag = Compute(body, cfg.Weak)
					c.SetHeader("ETag", tag)
				}
				if inm := c.Header("If-None-Match"); inm != "" && NoneMatch(inm, tag) {
					c.DelHeader("Content-Type")
					c.DelHeader("Content-Length")
					if werr := c.NoContent(http.StatusNotModified); werr != nil {
						return werr
					}
					return err
				}
			}
			if werr := c.Blob(status, "", body); werr != nil {
				return werr
			}
			return err
		}
	}
}

const hexDigits = "0123456789abcdef"

// Compute returns the tag the middleware computes for body, with its quotes.
func Compute(body []byte, weak bool) string {
	var b [2 + 1 + 16 + 1 + 8 + 1]byte
	n := 0
	if weak {
		n += copy(b[:], "W/")
	}
	b[n] = '"'
	n++
	n += putHex(b[n:], uint64(len(body)))
	b[n] = '-'
	n++
	n += putHex(b[n:], uint64(crc32.Checksum(body, castagnoli)))
	b[n] = '"'
	n++
	return string(b[:n])
}

// putHex writes v in hex without leading zeros (at least one digit) to dst.
func putHex(dst []byte, v uint64) int {
	var t [16]byte
	i := len(t)
	for {
		i--
		t[i] = hexDigits[v&0xf]
		v >>= 4
		if v == 0 {
			break
		}
	}
	return copy(dst, t[i:])
}

// NoneMatch reports whether an If-None-Match value matches tag, i.e. whether a
// GET or HEAD should be answered 304: "*" matches any tag, otherwise any listed
// entity-tag that equals tag by weak comparison (RFC 9110 §8.8.3.2). A malformed
// list matches nothing from the first malformed member on.
func NoneMatch(ifNoneMatch, tag string) bool {
	v := strings.TrimSpace(ifNoneMatch)
	if v == "*" {
		return tag != ""
	}
	opaque := strings.TrimPrefix(tag, "W/")
	for {
		v = strings.TrimLeft(v, " \t,")
		if v == "" {
			return false
		}
		v = strings.TrimPrefix(v, "W/")
		if len(v) < 2 || v[0] != '"' {
			return false
		}
		end := strings.IndexByte(v[1:], '"')
		if end < 0 {
			return false
		}
		if v[:end+2] == opaque {
			return true
		}
		v = v[end+2:]
	}
}
