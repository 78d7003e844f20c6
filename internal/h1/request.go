package h1

import "github.com/celeris-dev/celeris/httpfield"

// Field is one header field as received. Name and Value alias the buffer given to
// ParseHead (see Request's lifetime note).
type Field struct {
	Name  []byte
	Value []byte
}

// inlineFields is how many header fields a Request stores without allocating.
const inlineFields = 32

// Request is one parsed HTTP/1.x request head.
//
// Lifetime: every []byte in a Request aliases the buffer passed to ParseHead and is
// valid only while that buffer is. Rebase moves the views onto a copy of the buffer.
type Request struct {
	Method []byte // request method token
	URI    []byte // request-target as received
	Path   []byte // URI up to '?' (or the whole origin-form target)
	Query  []byte // after '?', without it; nil when absent
	Major  uint8  // always 1
	Minor  uint8  // 0 or 1

	Host    []byte  // the Host field value (RFC 9112 §3.2); nil when absent (HTTP/1.0)
	Headers []Field // every field in arrival order, including Host, Content-Length, ...

	// ContentLength is the Content-Length value, or -1 when absent.
	ContentLength int64
	// Chunked is true for Transfer-Encoding: chunked.
	Chunked bool
	// KeepAlive: HTTP/1.1 unless "Connection: close"; HTTP/1.0 only with
	// "Connection: keep-alive".
	KeepAlive bool
	// Expect100 is true for "Expect: 100-continue" (case-insensitive).
	Expect100 bool
	// UpgradeH2C is true when the request asks to upgrade to h2c (Upgrade header
	// containing the token "h2c", a Connection header listing both "Upgrade" and
	// "HTTP2-Settings", and exactly one HTTP2-Settings field). HTTP2Settings is that
	// field's value (base64url, not decoded).
	UpgradeH2C    bool
	HTTP2Settings []byte
	// Upgrade is true when the request asks to switch protocols: an Upgrade
	// field and a Connection field listing "upgrade" (RFC 9110 §7.8). A handler
	// may then answer 101 (WebSocket, RFC 6455 §4.2).
	Upgrade bool

	// HeadLen is the length of the request line and header section including the
	// final CRLF CRLF: the n returned by ParseHead.
	HeadLen int

	// hostOK is the last Host value found valid, as an owned copy (never a view
	// into a parsed buffer): a keep-alive connection repeats its Host, and a
	// value equal byte for byte to one that passed httpfield.ValidAuthority
	// passes again. clear keeps it; it belongs to the Request value that
	// ParseHead fills again and again (a connection's).
	hostOK hostCache

	inline [inlineFields]Field
}

// hostCacheLen is the longest Host value hostCache keeps.
const hostCacheLen = 63

// hostCache holds n bytes of b; n == 0 is empty (an empty Host is never valid).
type hostCache struct {
	n uint8
	b [hostCacheLen]byte
}

// validHost reports whether v is a valid Host value (httpfield.ValidAuthority),
// comparing it with the last one found valid first and remembering it when it
// is valid and short enough. Only contents are compared, so a value that was
// never checked cannot pass.
func (c *hostCache) validHost(v []byte) bool {
	if c.n != 0 && int(c.n) == len(v) && string(c.b[:c.n]) == string(v) {
		return true
	}
	if !httpfield.ValidAuthority(v) {
		return false
	}
	if len(v) <= hostCacheLen {
		c.n = uint8(copy(c.b[:], v))
	}
	return true
}

// Limits bound what ParseHead accepts. Zero values mean the defaults below.
type Limits struct {
	MaxURILength   int   // default 8 KiB -> 414 when exceeded
	MaxHeaderBytes int   // request line + header section, default 64 KiB -> 431
	MaxHeaderCount int   // default 256 -> 431
	MaxBodySize    int64 // default 4 MiB: Content-Length above it -> 413 from ParseHead
}

// Default limits.
const (
	DefaultMaxURILength   = 8 << 10
	DefaultMaxHeaderBytes = 64 << 10
	DefaultMaxHeaderCount = 256
	DefaultMaxBodySize    = 4 << 20
)

// Error is a request the server must refuse. Status is the response status code
// (400, 413, 414, 417, 431, 501, 505); after answering, the connection is closed.
type Error struct {
	Status int
	Reason string // short, for logs and the response body; never echoes input
}

func (e *Error) Error() string { return e.Reason }

// StatusCode is the response status for e; the framework's error handler uses it
// when a streamed body read fails.
func (e *Error) StatusCode() int { return e.Status }

// Reset clears r for reuse. Headers is left empty and backed by r's inline array.
func (r *Request) Reset() {
	n := len(r.Headers)
	if n > inlineFields || cap(r.Headers) != inlineFields {
		n = inlineFields
	}
	clear(r.inline[:n]) // drop references to the old buffer
	r.clear(r.inline[:0])
}

// clear zeroes every field but the inline array (assigning a composite literal
// would copy the array twice) and sets Headers to h.
func (r *Request) clear(h []Field) {
	r.Method, r.URI, r.Path, r.Query = nil, nil, nil, nil
	r.Major, r.Minor = 0, 0
	r.Host, r.Headers = nil, h
	r.ContentLength = -1
	r.Chunked, r.KeepAlive, r.Expect100, r.UpgradeH2C, r.Upgrade = false, false, false, false, false
	r.HTTP2Settings = nil
	r.HeadLen = 0
}

// Rebase re-points every slice of r from old, the buffer r was parsed from, onto new,
// a copy of old's first len(new) bytes (len(new) >= r.HeadLen). The slices of r must
// have been cut from old with two-index slice expressions, as ParseHead does, so
// that each one's offset in old is cap(old)-cap(s). Headers ends up backed by r's
// inline array when it holds no more than its 32 fields.
func (r *Request) Rebase(old, new []byte) {
	r.Method = rebase(r.Method, old, new)
	r.URI = rebase(r.URI, old, new)
	r.Path = rebase(r.Path, old, new)
	r.Query = rebase(r.Query, old, new)
	r.Host = rebase(r.Host, old, new)
	r.HTTP2Settings = rebase(r.HTTP2Settings, old, new)
	h := r.Headers
	if len(h) <= inlineFields {
		// Also covers a Request copied by value, whose Headers still points at the
		// original's inline array.
		h = r.inline[:copy(r.inline[:], h)]
	}
	for i := range h {
		h[i].Name = rebase(h[i].Name, old, new)
		h[i].Value = rebase(h[i].Value, old, new)
	}
	r.Headers = h
}

func rebase(s, old, new []byte) []byte {
	if s == nil {
		return nil
	}
	off := cap(old) - cap(s)
	return new[off : off+len(s)]
}
