package h2

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/work"
)

// Sentinel errors of this package.
var (
	// ErrBadSettings reports an HTTP2-Settings payload that is not a valid SETTINGS
	// payload (NewUpgradedConn); the engine answers the upgrade request with 400.
	ErrBadSettings = errors.New("h2: bad HTTP2-Settings payload")
	// ErrStreamClosed is returned by ResponseWriter and body reader calls once the
	// stream was reset or the connection closed.
	ErrStreamClosed = errors.New("h2: stream closed")
	// ErrAnswered is returned when a handler starts a second response.
	ErrAnswered = errors.New("h2: response already started")
	// ErrBodyClosed is returned by a request body's Read after its Close.
	ErrBodyClosed = errors.New("h2: read on a closed request body")
	// ErrBodyTooLarge is returned by the body reader when a streamed request body
	// exceeds Config.MaxRequestBodySize.
	ErrBodyTooLarge = errors.New("h2: request body too large")
	// ErrContentLength is returned by the body reader when the DATA of a streamed
	// request body exceed its content-length, or END_STREAM comes with fewer bytes
	// (RFC 9113 §8.1.1: a malformed request; the stream is reset).
	ErrContentLength = errors.New("h2: request body does not match content-length")
	// ErrBadPreface reports bytes that are not the client connection preface.
	ErrBadPreface = errors.New("h2: bad client preface")
)

const clientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

type phase uint8

const (
	phasePreface  phase = iota // waiting for the client preface
	phaseSettings              // the first frame must be SETTINGS (RFC 9113 §3.4)
	phaseOpen
	phaseClosed // a connection error was answered, or the connection closed
)

// Conn is the HTTP/2 state of one connection. It implements httpmsg.Proto.
type Conn struct {
	nc     httpmsg.Conn
	h      httpmsg.Handler
	pool   *work.Pool
	cfg    Config
	log    *slog.Logger
	remote net.Addr
	tls    *tls.ConnectionState // httpmsg.TLSConn; nil: plaintext

	// Everything from here to mu is owned by the event loop.
	phase        phase
	prefaceN     int         // bytes of the client preface matched so far
	born         time.Time   // when the Conn was made: the preface is due within SettingsTimeout of it
	prefaceTimer *time.Timer // runs while the preface is incomplete (preface.go)
	closeErr     error       // why the connection ends, returned from OnData/OnWake
	out          []byte

	streams       slottedStreamTable // open and half-closed streams
	free          []*stream          // recycled streams, at most maxFree
	spares        int                // streams on free that keep a Spare, at most maxSpares
	maxStreamID   uint32             // highest client stream id seen
	lastProcessed uint32             // highest stream id handed to Prepare (GOAWAY)
	handlers      int                // worker handlers running
	draining      int                // streams only discarding request body
	waiting       []*stream          // complete requests waiting for a handler slot
	sendq         []*stream          // streams with unsent response bytes
	sendqDirty    bool               // a window grew: retry the send queue
	closedRing    [16]closedID       // recently closed streams, to tell closed from idle
	ringPos       int
	goingAway     bool      // Shutdown sent the final GOAWAY
	goAwayBy      time.Time // Drain sent the first GOAWAY: the final one is due by then (goaway.go)
	outbound      func() int
	heldBack      bool // DATA waits because the engine holds too much unsent output
	dataOut       int  // DATA bytes handed to the engine in this callback (with outbound)
	dataWake      bool // this callback ran out of DATA budget and asked for a Wake

	// Peer settings (RFC 9113 §6.5.2) and windows.
	peerMaxFrame   uint32
	peerInitWindow int64
	sendWindow     int64 // connection send window
	recvWindow     int64 // connection receive window the peer may still use
	recvCredit     int64 // connection receive bytes released, not yet granted back

	// HPACK state (RFC 7541), one decoder and one encoder per connection.
	hdec *hpack.Decoder
	henc *hpack.Encoder
	hw   blockWriter
	hb   headerBlock
	dc   decodeCache
	hc   hdrCache
	// indexedOnly reports that the block being encoded used indexed fields only.
	indexedOnly bool
	intern      map[string]string
	scratch     []byte
	uniq        []int8 // writeHeaders: uniqueNames index per response field, or -1
	dateSrc     []byte
	dateStr     string
	defenses    defenses

	mu     sync.Mutex // guards the fields below and every stream's sh
	ready  []*stream  // streams with handler output for the loop
	ready2 []*stream  // owned by the loop: the drained ready list, reused
	closed bool       // OnClose ran: handlers must not wake the loop

	prefaceLate atomic.Bool // set by prefaceTimer's goroutine (preface.go)

	d directState // handlers run in place (direct.go)
}

// closedID remembers how a stream closed (RFC 9113 §5.1 "closed" rules differ).
type closedID struct {
	id  uint32
	how closeHow
}

type closeHow uint8

const (
	closedNormally closeHow = iota + 1 // both END_STREAMs
	closedByPeer                       // RST_STREAM received
	closedByUs                         // RST_STREAM sent
)

// blockWriter is the io.Writer of the HPACK encoder: it appends to b.
type blockWriter struct{ b []byte }

func (w *blockWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// NewConn returns the state of a prior-knowledge h2c connection. Call it on the
// loop: it writes the server preface (SETTINGS and a connection WINDOW_UPDATE) at
// once. The client preface is expected as the first bytes of OnData. pool runs
// the handlers of non-inline routes and must not be nil; cfg may be nil.
func NewConn(nc httpmsg.Conn, h httpmsg.Handler, pool *work.Pool, cfg *Config) *Conn {
	c := newConn(nc, h, pool, cfg)
	if c.tls != nil && !tlsAdequate(c.tls) {
		c.connError(frame.ConnError{Code: frame.ErrCodeInadequateSecurity, Reason: inadequateTLS})
		c.flush()
		nc.Close()
		return c
	}
	c.writePreface()
	c.flush()
	return c
}

// NewUpgradedConn returns the state of a connection upgraded from HTTP/1.1
// (RFC 7540 §3.2). Call it on the loop after writing the 101 response. settings is
// the decoded HTTP2-Settings payload; req is the request that asked to upgrade,
// with its body complete in req.Body, and becomes the request of stream 1 (the
// Conn takes ownership of it). The server preface goes out first, then stream 1,
// half-closed (remote), is dispatched; its response leaves on stream 1 (an inline
// route runs during this call). The client preface is still expected as the first
// bytes of OnData. A bad settings payload returns ErrBadSettings and no Conn.
func NewUpgradedConn(nc httpmsg.Conn, h httpmsg.Handler, pool *work.Pool, cfg *Config, settings []byte, req *httpmsg.Request) (*Conn, error) {
	if len(settings)%6 != 0 {
		return nil, ErrBadSettings
	}
	c := newConn(nc, h, pool, cfg)
	f := frame.Frame{Type: frame.TypeSettings, Payload: settings}
	for i := range f.NumSettings() {
		if f.Setting(i).Valid() != nil {
			return nil, ErrBadSettings
		}
	}
	if err := c.applySettings(&f, false); err != nil {
		return nil, ErrBadSettings
	}
	c.writePreface()
	c.watchPreface() // the client's preface follows the 101 response
	s := c.newStream(1)
	hdr, tr := s.req.Header, s.req.Trailer
	s.req = *req
	// The HTTP/1.1 exchange keeps its own Context (Spare) and recycles it: this
	// stream starts without one, and keeps the next as every stream does.
	s.req.Spare, s.req.KeepsSpare = nil, true
	if s.req.Header == nil {
		s.req.Header = hdr
	}
	if s.req.Trailer == nil {
		s.req.Trailer = tr[:0]
	}
	// The HTTP/1.1 connection fields (Connection, Upgrade, HTTP2-Settings, ...)
	// mean nothing on stream 1 (RFC 9113 §8.2.2).
	kept := s.req.Header[:0]
	for _, f := range s.req.Header {
		if !httpfield.ConnectionSpecific(f.Name) && !httpmsg.EqualFold(f.Name, "http2-settings") {
			kept = append(kept, f)
		}
	}
	clear(s.req.Header[len(kept):])
	s.req.Header = kept
	s.req.Proto, s.req.ProtoMajor, s.req.ProtoMinor = "HTTP/2.0", 2, 0
	s.req.StreamID = 1
	s.req.RemoteAddr = c.remote
	s.req.BodyReader = nil
	if len(s.req.Body) == 0 {
		s.req.Body = nil
	}
	s.req.ContentLength = int64(len(s.req.Body))
	s.isHead = s.req.Method == "HEAD"
	s.remoteDone = true
	c.maxStreamID, c.lastProcessed = 1, 1
	c.streams.put(s)
	c.count(s)
	s.inline = c.h.Prepare(&s.req)
	c.dispatch(s)
	c.afterIO()
	return c, nil
}

func newConn(nc httpmsg.Conn, h httpmsg.Handler, pool *work.Pool, cfg *Config) *Conn {
	c := &Conn{
		nc:             nc,
		h:              h,
		pool:           pool,
		cfg:            cfg.withDefaults(),
		remote:         nc.RemoteAddr(),
		tls:            httpmsg.TLSState(nc),
		outbound:       httpmsg.Outbound(nc),
		peerMaxFrame:   frame.MinMaxFrameSize,
		peerInitWindow: 65535,
		sendWindow:     65535,
		recvWindow:     65535,
		intern:         make(map[string]string),
	}
	c.log = c.cfg.Logger
	c.hdec = hpack.NewDecoder(c.cfg.HeaderTableSize, nil)
	c.hdec.SetEmitFunc(c.onField)
	// A string is bounded by the raw header block it comes in (headerFragment
	// ends a connection whose block passes MaxHeaderListSize+MaxFrameSize), times
	// 8/5 for Huffman coding, so that the decoder never fails on one: a string
	// longer than the header list makes the list too large, which is answered 431
	// (RFC 9113 §10.5.1), not COMPRESSION_ERROR, since the compression context
	// stays intact (§5.4.1).
	c.hdec.SetMaxStringLength((int(c.cfg.MaxHeaderListSize) + int(c.cfg.MaxFrameSize)) * 8 / 5)
	c.henc = hpack.NewEncoder(&c.hw)
	if c.cfg.InPlace {
		c.d.dr, _ = nc.(httpmsg.DirectRunner)
	}
	c.born = time.Now()
	c.defenses.init(c.born)
	return c
}

// writePreface writes the server connection preface (RFC 9113 §3.4): our SETTINGS,
// then a WINDOW_UPDATE growing the connection receive window beyond 65535.
func (c *Conn) writePreface() {
	settings := [...]frame.Setting{
		{ID: frame.SettingMaxConcurrentStreams, Val: c.cfg.MaxConcurrentStreams},
		{ID: frame.SettingInitialWindowSize, Val: c.cfg.InitialWindowSize},
		{ID: frame.SettingMaxFrameSize, Val: c.cfg.MaxFrameSize},
		{ID: frame.SettingMaxHeaderListSize, Val: c.cfg.MaxHeaderListSize},
		{ID: frame.SettingHeaderTableSize, Val: c.cfg.HeaderTableSize},
		{ID: frame.SettingEnablePush, Val: 0},
		{ID: frame.SettingEnableConnectProtocol, Val: 1}, // RFC 8441 §3
	}
	n := len(settings)
	if !c.cfg.EnableConnectProtocol {
		n--
	}
	c.out = frame.AppendSettings(c.out, settings[:n]...)
	if w := c.cfg.connWindow(); w > c.recvWindow {
		c.out = frame.AppendWindowUpdate(c.out, 0, uint32(w-c.recvWindow))
		c.recvWindow = w
	}
}

// setOutboundBuffered replaces what the Conn learned from its httpmsg.Conn
// (httpmsg.OutboundReporter) about the engine's unsent output: tests drive the
// figure with it. With a figure, DATA is held back while more than
// outboundLimit bytes are unsent, so a peer that grants large windows but never
// reads cannot make the engine buffer without bound; and the control-frame
// flood bound counts frames answered while output is pending instead of per
// second. Held-back DATA is retried at every later callback: the engine wakes a
// connection whose output drained (httpmsg.DrainWaiter). Loop only.
func (c *Conn) setOutboundBuffered(fn func() int) { c.outbound = fn }

// OnData consumes the bytes the peer sent. It implements httpmsg.Proto.
func (c *Conn) OnData(in []byte) (int, error) {
	c.enter()
	if c.phase == phaseClosed {
		return len(in), c.closeErr
	}
	n := 0
	if c.phase == phasePreface {
		k := min(len(in), len(clientPreface)-c.prefaceN)
		if string(in[:k]) != clientPreface[c.prefaceN:c.prefaceN+k] {
			// RFC 9113 §3.4: an invalid preface is a connection error PROTOCOL_ERROR.
			c.connError(frame.ConnError{Code: frame.ErrCodeProtocol, Reason: "bad client preface"})
			c.closeErr = ErrBadPreface
			c.flush()
			return len(in), c.closeErr
		}
		c.prefaceN += k
		n = k
		if c.prefaceN < len(clientPreface) {
			c.watchPreface()
			return n, nil
		}
		c.phase = phaseSettings
	}
	c.defenses.onRead(c)
	c.d.inData = true
	for c.phase != phaseClosed {
		f, k, err := frame.Parse(in[n:], c.cfg.MaxFrameSize)
		if err == frame.ErrNeedMore {
			break
		}
		n += k
		if err == nil {
			err = c.processFrame(&f)
		}
		if err != nil {
			c.handleError(err)
		}
	}
	c.d.inData = false
	c.watchPreface()
	c.afterIO()
	if c.phase == phaseClosed {
		return len(in), c.closeErr
	}
	return n, nil
}

// handleError answers a protocol error: RST_STREAM for a stream error, GOAWAY for
// anything else (RFC 9113 §5.4).
func (c *Conn) handleError(err error) {
	var se frame.StreamError
	if errors.As(err, &se) {
		if err := c.resetStreamID(se.StreamID, se.Code); err != nil {
			c.handleError(err)
		}
		return
	}
	var ce frame.ConnError
	if !errors.As(err, &ce) {
		ce = frame.ConnError{Code: frame.ErrCodeInternal, Reason: err.Error()}
	}
	c.connError(ce)
}

// connError sends GOAWAY with the last processed stream id (RFC 9113 §5.4.1) and
// ends the connection once the output is flushed.
func (c *Conn) connError(e frame.ConnError) {
	if c.phase == phaseClosed {
		return
	}
	if e.Code == frame.ErrCodeEnhanceYourCalm {
		c.log.Info("h2: closing abusive connection", "remote", c.remote, "reason", e.Reason)
	} else {
		c.log.Debug("h2: connection error", "remote", c.remote, "code", e.Code.String(), "reason", e.Reason)
	}
	c.out = frame.AppendGoAway(c.out, c.lastProcessed, e.Code, []byte(e.Reason))
	c.phase = phaseClosed
	c.closeErr = e
	c.abortStreams()
}

// OnWake drains what handler goroutines handed to the loop. It implements
// httpmsg.Proto.
func (c *Conn) OnWake() error {
	c.enter()
	if c.phase == phaseClosed {
		return c.closeErr
	}
	c.prefaceCheck()
	c.mu.Lock()
	ready := c.ready
	c.ready = c.ready2[:0]
	c.mu.Unlock()
	for _, s := range ready {
		c.service(s)
	}
	clear(ready)
	c.ready2 = ready[:0]

	c.checkGoAwayWait()
	c.afterIO()
	if c.phase == phaseClosed {
		return c.closeErr
	}
	return nil
}

// OnClose releases the connection: handlers blocked on it fail with
// ErrStreamClosed. It implements httpmsg.Proto.
func (c *Conn) OnClose(error) {
	c.enter()
	c.phase = phaseClosed
	c.watchPreface() // stops the timer
	c.abortStreams()
	c.mu.Lock()
	c.closed = true
	clear(c.ready)
	c.ready = c.ready[:0]
	c.mu.Unlock()
	for _, s := range c.free {
		c.dropSpare(s)
	}
	c.free, c.spares = nil, 0
	c.out = nil
}

// Busy reports whether a stream is open, a handler runs or a header block is
// incomplete. It implements httpmsg.Proto.
func (c *Conn) Busy() bool {
	c.enter()
	return c.streams.len() > c.draining || c.handlers > 0 || c.hb.active
}

// Shutdown starts a graceful close (RFC 9113 §6.8): GOAWAY NO_ERROR naming the
// highest stream seen; streams in flight finish, later ones are ignored, and the
// connection closes when none remains but streams whose response is complete and
// whose client still sends (those get RST_STREAM NO_ERROR: afterIO). Call on the
// loop.
func (c *Conn) Shutdown() {
	c.enter()
	if c.phase == phaseClosed || c.goingAway {
		return
	}
	c.finalGoAway()
	c.afterIO()
}

// afterIO ends every loop callback: it retries streams waiting for window, returns
// receive credit, closes a drained connection after GOAWAY, and hands the frames
// of this callback to the engine in one Write.
func (c *Conn) afterIO() {
	if c.phase != phaseClosed {
		if c.heldBack {
			c.heldBack = false
			c.sendqDirty = true // the engine may have drained its output since
		}
		if c.sendqDirty {
			c.sendqDirty = false
			c.runSendq()
		}
		c.grantConnCredit()
		if c.goingAway && c.streams.len() == c.draining && c.handlers == 0 && !c.hb.active {
			// RFC 9113 §8.1: every response is complete; a client still sending a
			// request body is asked to stop (RST_STREAM NO_ERROR), so that after
			// GOAWAY it cannot hold the connection, and graceful shutdown, open.
			for s := range c.streams.all() {
				c.resetStream(s, frame.ErrCodeNo)
			}
			c.phase = phaseClosed
			c.flush()
			c.nc.Close()
			return
		}
	}
	c.flush()
}

// flush hands the frames built in this callback to the engine.
func (c *Conn) flush() {
	if len(c.out) > 0 {
		c.out = httpmsg.WriteOwned(c.nc, c.out)
	}
	c.dataOut, c.dataWake = 0, false
	if cap(c.out) > maxOutKeep {
		c.out = nil
	} else {
		c.out = c.out[:0]
	}
}

const maxOutKeep = 256 << 10 // output buffer capacity kept between callbacks
