// Package requestid gives every request an id, for logs and for tracing a request
// across services.
//
// The middleware reads the id header of the request (X-Request-ID by default). A
// valid incoming id is kept; otherwise a new one is generated. The id is set on the
// response header of the same name and stored in the Context under ContextKey
// ("request_id" by default), where Get finds it:
//
//	s.Use(requestid.Default())
//	s.GET("/", func(c *celeris.Context) error {
//		return c.String(200, "your request is "+requestid.Get(c))
//	})
//
// A valid incoming id is 1 to 128 bytes, each an ASCII letter, a digit or one of
// - _ . : + / = (this admits UUIDs, ULIDs, hex and base64 ids, and keeps control
// characters, spaces, quotes and separators out of logs). Anything else is replaced.
//
// Generated ids are a random 64-bit prefix chosen once per process, a dash and a
// per-process counter, both in hex ("3f9a0c7e12d4b8a1-2a"): unique within the
// process, unlikely to collide across processes, and made without crypto/rand or a
// lock per request.
//
// Cost: keeping a valid incoming id allocates nothing except the store under
// ContextKey (boxing a string into the Context's any costs one 16-byte allocation;
// set ContextKey to "-" to skip the store, Get then reads the response header). A
// generated id costs one allocation for its string; with ContextKey "-" it is
// formatted into the Context's own buffer (celeris.Context.SetHeaderBytes) and costs
// none. Either way Get's result is valid until the handler returns.
package requestid

import (
	"crypto/rand"
	"encoding/binary"
	"net/http"
	"sync/atomic"

	"github.com/celeris-dev/celeris"
)

// DefaultHeader is the header that carries the id.
const DefaultHeader = "X-Request-ID"

// DefaultContextKey is the Context key the id is stored under.
const DefaultContextKey = "request_id"

// MaxLength is the longest incoming id that is kept.
const MaxLength = 128

// Config configures the middleware. Zero values mean the defaults in brackets.
type Config struct {
	// Header is the request and response header that carries the id [X-Request-ID].
	Header string
	// ContextKey is the key of the id in the Context (c.Get) ["request_id"];
	// "-" stores nothing.
	ContextKey string
	// Generator makes a new id [a random process prefix and a counter, see the
	// package doc]. It is called concurrently.
	Generator func() string
	// IgnoreIncoming always generates an id, never keeping the client's [false].
	IgnoreIncoming bool
}

// Default returns the middleware with the default configuration.
func Default() celeris.MiddlewareFunc { return New(Config{}) }

// New returns the middleware.
func New(cfg Config) celeris.MiddlewareFunc {
	if cfg.Header == "" {
		cfg.Header = DefaultHeader
	}
	if cfg.ContextKey == "" {
		cfg.ContextKey = DefaultContextKey
	}
	builtin := cfg.Generator == nil
	if builtin {
		cfg.Generator = Generate
	}
	store := cfg.ContextKey != "-"
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			id := ""
			if !cfg.IgnoreIncoming {
				id = c.Header(cfg.Header)
			}
			switch {
			case Valid(id):
				c.SetHeader(cfg.Header, id)
			case builtin && !store:
				// Generate's id, formatted into the Context's buffer: no allocation.
				// Only when it is not stored: a value under ContextKey may be kept
				// by user code, so it must be a string of its own.
				var b [idLen]byte
				id = c.SetHeaderBytes(cfg.Header, appendID(b[:0]))
			default:
				id = cfg.Generator()
				c.SetHeader(cfg.Header, id)
			}
			if store {
				c.Set(cfg.ContextKey, id)
			}
			return next(c)
		}
	}
}

// Get returns the request id of c: the string stored under DefaultContextKey, or
// else the DefaultHeader response header ("" when neither is set). With a custom
// Header or ContextKey, read those instead. Valid until the handler returns.
func Get(c *celeris.Context) string {
	if v, ok := c.Get(DefaultContextKey); ok {
		if s, ok := v.(string); ok {
			return s
		}
	}
	return c.ResponseHeader(DefaultHeader)
}

// Valid reports whether id is kept when it comes with a request: 1 to MaxLength
// bytes of ASCII letters, digits and - _ . : + / =.
func Valid(id string) bool {
	if len(id) == 0 || len(id) > MaxLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !idByte[id[i]] {
			return false
		}
	}
	return true
}

var idByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "-_.:+/=" {
		t[c] = true
	}
	return t
}()

var (
	prefix  [17]byte // 16 hex digits and '-'
	counter atomic.Uint64
)

func init() {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	appendHex(prefix[:0], binary.BigEndian.Uint64(b[:]), 16)
	prefix[16] = '-'
}

const hexDigits = "0123456789abcdef"

// appendHex appends v in hex with at least min digits.
func appendHex(dst []byte, v uint64, min int) []byte {
	var b [16]byte
	i := len(b)
	for v != 0 || len(b)-i < min {
		i--
		b[i] = hexDigits[v&0xf]
		v >>= 4
	}
	return append(dst, b[i:]...)
}

// RefusalHeader gives the answers the server makes without running middleware
// (malformed requests, limits; see celeris.Config.RefusalHeader) a generated id in
// DefaultHeader, so that every response carries one:
//
//	s := celeris.New(celeris.Config{RefusalHeader: requestid.RefusalHeader})
//	s.Use(requestid.Default())
func RefusalHeader(int) http.Header {
	return http.Header{DefaultHeader: {Generate()}}
}

// Generate returns a new process-unique id (the default Generator).
func Generate() string {
	var b [idLen]byte
	return string(appendID(b[:0]))
}

// idLen bounds the length of a generated id: the prefix and 16 hex digits.
const idLen = len(prefix) + 16

// appendID appends a new process-unique id to dst.
func appendID(dst []byte) []byte {
	return appendHex(append(dst, prefix[:]...), counter.Add(1), 1)
}
