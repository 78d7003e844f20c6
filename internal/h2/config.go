package h2

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Config holds the limits of one HTTP/2 connection. The zero value of every field
// means its default.
type Config struct {
	// MaxConcurrentStreams is advertised in SETTINGS; a HEADERS frame opening a
	// stream beyond it gets RST_STREAM REFUSED_STREAM (RFC 9113 §5.1.2). Default 250.
	MaxConcurrentStreams uint32
	// InitialWindowSize is the stream receive window advertised (SETTINGS), default
	// 1 MiB. The connection receive window is twice that (at least 1 MiB), granted
	// with a WINDOW_UPDATE right after the server preface.
	InitialWindowSize uint32
	// MaxFrameSize is the largest frame payload accepted (SETTINGS), default 16384.
	MaxFrameSize uint32
	// MaxHeaderListSize bounds the decoded header list (RFC 9113 §6.5.2 size: names,
	// values and 32 bytes per field) and the raw header block bytes. Default 64 KiB.
	MaxHeaderListSize uint32
	// HeaderTableSize is our HPACK decoder's dynamic table size, default 4096.
	HeaderTableSize uint32
	// MaxRequestBodySize bounds one request body, default 4 MiB. A declared
	// content-length above it, or a buffered (inline-route) body growing past it,
	// is answered 413 without running the handler, followed by RST_STREAM NO_ERROR
	// when the client was still sending. A streamed body (worker route) growing past
	// it makes the body reader fail with ErrBodyTooLarge; the handler answers (the
	// framework: 413), and the stream is then reset with NO_ERROR if the client is
	// still sending.
	MaxRequestBodySize int64
	// MaxHandlersPerConn bounds the handlers of one connection running on workers
	// at once; further requests wait on the loop (they still count as open streams).
	// A handler holds its slot until it returns, even after its stream was reset.
	// Default and maximum MaxConcurrentStreams.
	MaxHandlersPerConn int
	// RefusalFields, when set, gives the extra header fields of the answers this
	// layer makes itself, to requests no handler sees (400 for a malformed request,
	// 413, 431, and 503 when no worker takes a handler). It gets the status and
	// runs on the event loop.
	RefusalFields func(status int) []httpmsg.Field
	// RefusalBody, when set, gives the Content-Type and body of the same answers
	// ("" and nil: none, the default). A body larger than the stream's or the
	// connection's send window is left out. It runs on the event loop.
	RefusalBody func(status int) (contentType string, body []byte)
	// SettingsTimeout bounds the wait for the client's connection preface, its
	// SETTINGS frame included, from the connection's start; past it the
	// connection ends with GOAWAY SETTINGS_TIMEOUT (preface.go). Default 10 s.
	SettingsTimeout time.Duration
	// EnableConnectProtocol advertises SETTINGS_ENABLE_CONNECT_PROTOCOL and
	// accepts extended CONNECT requests (RFC 8441: a :protocol pseudo-header, as
	// WebSocket over HTTP/2 sends). Their streams are tunnels: their DATA is not a
	// request body, so MaxRequestBodySize does not bound it (flow control does).
	EnableConnectProtocol bool

	// InPlace: a stream whose handler would go to a worker runs in place when
	// the engine can (httpmsg.DirectRunner; direct.go) and moves to a worker
	// once it waits. Off, every such handler goes to a worker. A stream whose
	// route's record says its handler waits (Request.InPlace) goes to a
	// worker, and every stream run in place is timed and recorded there
	// (directrun.Record.Ran, against SlowTicks).
	InPlace bool
	// SlowTicks: a handler in place that holds the loop longer than this
	// (directrun.Ticks) is a slow run of its route's handler.
	SlowTicks int64
	// StreamGauge, when set, counts the open streams of every connection using
	// this Config (for metrics).
	StreamGauge *atomic.Int64
	// Logger receives cold-path events (connection errors). Nil means slog.Default().
	Logger *slog.Logger
}

const (
	defaultMaxConcurrentStreams = 250
	defaultInitialWindowSize    = 1 << 20
	defaultMaxHeaderListSize    = 64 << 10
	defaultHeaderTableSize      = 4096
	defaultMaxRequestBodySize   = 4 << 20
)

// withDefaults returns a copy of c (which may be nil) with defaults filled in and
// values clamped to what RFC 9113 allows.
func (c *Config) withDefaults() Config {
	var r Config
	if c != nil {
		r = *c
	}
	if r.MaxConcurrentStreams == 0 {
		r.MaxConcurrentStreams = defaultMaxConcurrentStreams
	}
	if r.InitialWindowSize == 0 {
		r.InitialWindowSize = defaultInitialWindowSize
	}
	r.InitialWindowSize = min(r.InitialWindowSize, frame.MaxWindow)
	if r.MaxFrameSize == 0 {
		r.MaxFrameSize = frame.MinMaxFrameSize
	}
	r.MaxFrameSize = max(min(r.MaxFrameSize, frame.MaxMaxFrameSize), frame.MinMaxFrameSize)
	if r.MaxHeaderListSize == 0 {
		r.MaxHeaderListSize = defaultMaxHeaderListSize
	}
	if r.HeaderTableSize == 0 {
		r.HeaderTableSize = defaultHeaderTableSize
	}
	if r.MaxRequestBodySize == 0 {
		r.MaxRequestBodySize = defaultMaxRequestBodySize
	}
	if r.SettingsTimeout <= 0 {
		r.SettingsTimeout = defaultSettingsTimeout
	}
	if r.MaxHandlersPerConn <= 0 {
		r.MaxHandlersPerConn = int(r.MaxConcurrentStreams)
	}
	// CVE-2025-8671 (MadeYouReset): the handler of a stream reset by either side
	// may run on after the stream left the count of open streams; bounding the
	// handlers themselves by MaxConcurrentStreams keeps what runs at once within
	// what SETTINGS advertises, however streams end.
	r.MaxHandlersPerConn = min(r.MaxHandlersPerConn, int(r.MaxConcurrentStreams))
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	return r
}

// connWindow is the connection receive window we grant: twice the stream window, so
// one stalled stream cannot starve the others, and at least 1 MiB.
func (c *Config) connWindow() int64 {
	return min(max(2*int64(c.InitialWindowSize), 1<<20), frame.MaxWindow)
}
