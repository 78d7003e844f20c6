package compress

import (
	"io"
	"strings"
	"sync"
)

// Encoder is a content coding (RFC 9110 §8.4.1) the middleware can apply. Its
// methods are called from many goroutines at once.
type Encoder interface {
	// Coding is the coding's token in Accept-Encoding and Content-Encoding:
	// "gzip", "br", "zstd".
	Coding() string
	// Acquire returns a Writer that encodes into dst (from a pool, reset).
	Acquire(dst io.Writer) Writer
	// Release takes back a Writer from Acquire once it is closed, or abandoned.
	Release(w Writer)
}

// Writer encodes into the writer Acquire was given.
type Writer interface {
	io.Writer
	// Flush writes out all that was written so far as data the client can
	// decode without what follows.
	Flush() error
	// Close writes out the rest and ends the encoded data.
	Close() error
}

// BodyEncoder is an Encoder that also encodes a whole body in one call, which
// the middleware then uses for captured responses (zstd's EncodeAll, say).
type BodyEncoder interface {
	Encoder
	// EncodeAll appends src, encoded, to dst and returns the result.
	EncodeAll(src, dst []byte) []byte
}

var registry struct {
	mu   sync.Mutex
	encs []Encoder
}

// Register adds Encoders to the default list (Config.Encoders nil) of the
// middleware made by later calls of New and Default, in their order, after
// those registered before and ahead of the built-in gzip (a registered gzip
// Encoder replaces it); one for a coding registered before replaces it. Call it
// at start, before building the server: cmd/demo registers the compress
// module's zstd, brotli and gzip Encoders so.
func Register(encs ...Encoder) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
next:
	for _, e := range encs {
		for i, prev := range registry.encs {
			if strings.EqualFold(prev.Coding(), e.Coding()) {
				registry.encs[i] = e
				continue next
			}
		}
		registry.encs = append(registry.encs, e)
	}
}

// Registered returns a copy of the Encoders passed to Register (gzip is not
// among them unless registered).
func Registered() []Encoder {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return append([]Encoder(nil), registry.encs...)
}
