// Package h2client is the load generator's HTTP/2 client: prior-knowledge h2c
// over one TCP connection (RFC 9113 §3.3), built on golang.org/x/net/http2's
// Framer and hpack, with many concurrent streams per connection.
//
// Life of a request: Do reserves a stream slot (honouring the server's
// SETTINGS_MAX_CONCURRENT_STREAMS), then under the write lock takes the next
// odd stream ID and writes HEADERS, so IDs go out in increasing order
// (RFC 9113 §5.1.1); a body follows as DATA frames sized by both send windows
// (§6.9). One reader goroutine owns the Framer's read side and the hpack
// decoder: it routes HEADERS and DATA to their stream, returns flow-control
// credit with WINDOW_UPDATE once half a window is consumed, answers SETTINGS
// and PING, and fails streams on RST_STREAM and the whole connection on
// GOAWAY or a read error. Writers only fill the buffered writer; a flusher
// goroutine, kicked by each of them, yields once (so every writer made
// runnable by the same burst of responses adds its frames first) and then
// writes them all in one system call.
package h2client

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// Errors a request can fail with (besides I/O errors).
var (
	// ErrGoAway: the server sent GOAWAY; the connection is finished.
	ErrGoAway = errors.New("h2client: server sent GOAWAY")
	// ErrConnClosed: the connection was closed locally or ran out of stream IDs.
	ErrConnClosed = errors.New("h2client: connection closed")
	// ErrNoSettings: the server did not send its SETTINGS in time.
	ErrNoSettings = errors.New("h2client: no SETTINGS from server")
)

// StreamError is a RST_STREAM from the server.
type StreamError struct {
	StreamID uint32
	Code     http2.ErrCode
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("h2client: stream %d reset by server: %v", e.StreamID, e.Code)
}

// Request is one request; Conn.Do may be called with the same Request from
// many goroutines.
type Request struct {
	Method    string
	Path      string
	Authority string
	// Body is sent as DATA when non-empty.
	Body        []byte
	ContentType string
}

// Response is one stream's answer.
type Response struct {
	Status  int
	BodyLen int64
	// Body holds the body when the connection captures bodies.
	Body []byte
}

// Options tune a connection; zero values take the defaults.
type Options struct {
	// StreamWindow is our SETTINGS_INITIAL_WINDOW_SIZE (default 1 MiB).
	StreamWindow uint32
	// ConnWindow is our connection receive window (default 16 MiB).
	ConnWindow uint32
	// Capture keeps response bodies (for answer checks).
	Capture bool
	// Timeout bounds the dial and the wait for the server's SETTINGS.
	Timeout time.Duration
	// TLS: h2 over TLS (ALPN h2, the server's certificate not verified: the
	// bench servers' are self-signed) instead of prior-knowledge h2c.
	TLS bool
}

const maxStreamID = 1<<31 - 1

// Conn is one HTTP/2 connection shared by many goroutines.
type Conn struct {
	nc   net.Conn
	fr   *http2.Framer
	bw   *bufio.Writer
	opts Options

	// Write side: owned by whoever holds wmu.
	wmu    sync.Mutex
	dirty  bool          // bw holds unflushed frames; guarded by wmu
	kick   chan struct{} // wakes the flusher (capacity 1)
	henc   *hpack.Encoder
	hbuf   bytes.Buffer
	nextID uint32

	// Shared state: guarded by mu; cond signals window, slot and death changes.
	mu            sync.Mutex
	cond          sync.Cond
	streams       map[uint32]*stream
	active        int
	maxConcurrent int
	peerWindow    int64 // server's SETTINGS_INITIAL_WINDOW_SIZE: send window of new streams
	peerMaxFrame  int
	connSend      int64 // our send window on the connection
	err           error // set once: the connection is dead

	// Owned by the reader goroutine.
	connUnacked int64

	settingsOnce sync.Once
	settings     chan struct{} // closed at the server's first SETTINGS
	done         chan struct{} // closed when the reader exits
}

type stream struct {
	id     uint32
	send   int64 // send window; guarded by Conn.mu
	ended  bool  // guarded by Conn.mu
	result chan error

	// Owned by the reader goroutine until result is sent.
	unacked int64
	resp    Response
}

// Dial opens a prior-knowledge h2c connection and waits for the server's SETTINGS.
func Dial(addr string, opts Options) (*Conn, error) {
	if opts.StreamWindow == 0 {
		opts.StreamWindow = 1 << 20
	}
	if opts.ConnWindow == 0 {
		opts.ConnWindow = 16 << 20
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	nc, err := dial(addr, opts)
	if err != nil {
		return nil, err
	}
	c := &Conn{
		nc:            nc,
		bw:            bufio.NewWriterSize(nc, 32<<10),
		opts:          opts,
		nextID:        1,
		streams:       make(map[uint32]*stream),
		maxConcurrent: maxStreamID,
		peerWindow:    65535, // RFC 9113 §6.9.2 initial values until SETTINGS say otherwise
		peerMaxFrame:  16384,
		connSend:      65535,
		settings:      make(chan struct{}),
		done:          make(chan struct{}),
		kick:          make(chan struct{}, 1),
	}
	c.cond.L = &c.mu
	c.fr = http2.NewFramer(c.bw, bufio.NewReaderSize(nc, 64<<10))
	c.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	c.fr.MaxHeaderListSize = 1 << 20
	c.fr.SetReuseFrames()
	c.henc = hpack.NewEncoder(&c.hbuf)

	// RFC 9113 §3.4: the preface, then our SETTINGS.
	c.bw.WriteString(http2.ClientPreface)
	err = c.fr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: opts.StreamWindow},
	)
	if err == nil && opts.ConnWindow > 65535 {
		err = c.fr.WriteWindowUpdate(0, opts.ConnWindow-65535)
	}
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		nc.Close()
		return nil, err
	}
	go c.flushLoop()
	go c.readLoop()
	t := time.NewTimer(opts.Timeout)
	defer t.Stop()
	select {
	case <-c.settings:
		return c, nil
	case <-c.done:
		return nil, c.deadErr()
	case <-t.C:
		c.fail(ErrNoSettings)
		return nil, ErrNoSettings
	}
}

// dial opens the TCP connection, or with opts.TLS the TLS one, and checks
// that the server chose h2 by ALPN (RFC 9113 §3.2).
func dial(addr string, opts Options) (net.Conn, error) {
	if !opts.TLS {
		return net.DialTimeout("tcp", addr, opts.Timeout)
	}
	d := &net.Dialer{Timeout: opts.Timeout}
	cfg := &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}}
	tc, err := tls.DialWithDialer(d, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		tc.Close()
		return nil, fmt.Errorf("h2client: server chose ALPN %q, want h2", p)
	}
	return tc, nil
}

// Close closes the connection; requests in flight fail with ErrConnClosed.
func (c *Conn) Close() error {
	c.fail(ErrConnClosed)
	return nil
}

// Err returns the reason the connection died, or nil while it is usable.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Conn) deadErr() error {
	if err := c.Err(); err != nil {
		return err
	}
	return ErrConnClosed
}

// fail marks the connection dead (once), closes the socket and fails every
// open stream with err.
func (c *Conn) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	open := c.streams
	c.streams = map[uint32]*stream{}
	for _, st := range open {
		st.ended = true
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	c.nc.Close()
	for _, st := range open {
		st.result <- err
	}
}

func (c *Conn) lockWrite() { c.wmu.Lock() }

// unlockWrite releases the write lock after frames were added to the
// buffer (werr is the error from adding them) and kicks the flusher.
func (c *Conn) unlockWrite(werr error) error {
	if werr == nil {
		c.dirty = true
	}
	c.wmu.Unlock()
	if werr != nil {
		c.fail(werr)
		return werr
	}
	select {
	case c.kick <- struct{}{}:
	default: // a kick is already pending: that flush will carry these frames
	}
	return nil
}

// flushLoop writes buffered frames until the connection dies.
func (c *Conn) flushLoop() {
	for {
		select {
		case <-c.kick:
		case <-c.done:
			return
		}
		// Let the other goroutines woken by the same burst queue their
		// frames, so they leave in this one write.
		runtime.Gosched()
		c.wmu.Lock()
		var err error
		if c.dirty {
			err = c.bw.Flush()
			c.dirty = false
		}
		c.wmu.Unlock()
		if err != nil {
			c.fail(err)
			return
		}
	}
}

// Do sends req on a new stream and waits for the whole response. The
// returned Response.Body (when captured) belongs to the caller.
func (c *Conn) Do(req *Request) (Response, error) {
	st := &stream{result: make(chan error, 1)}
	c.mu.Lock()
	for c.err == nil && c.active >= c.maxConcurrent {
		c.cond.Wait()
	}
	if c.err != nil {
		c.mu.Unlock()
		return Response{}, c.err
	}
	c.active++
	c.mu.Unlock()

	c.lockWrite()
	c.mu.Lock()
	if c.err != nil || c.nextID > maxStreamID {
		exhausted := c.nextID > maxStreamID
		c.active--
		c.mu.Unlock()
		c.unlockWrite(nil)
		if exhausted {
			c.fail(ErrConnClosed) // out of stream IDs: the caller dials again
		}
		return Response{}, c.deadErr()
	}
	st.id = c.nextID
	c.nextID += 2
	st.send = c.peerWindow
	c.streams[st.id] = st
	c.mu.Unlock()
	err := c.writeHeaders(st.id, req)
	if c.unlockWrite(err) != nil {
		return Response{}, <-st.result
	}
	if len(req.Body) > 0 {
		c.writeBody(st, req.Body)
	}
	if err := <-st.result; err != nil {
		return Response{}, err
	}
	return st.resp, nil
}

// writeHeaders encodes and writes the request's HEADERS; wmu is held.
func (c *Conn) writeHeaders(id uint32, req *Request) error {
	c.hbuf.Reset()
	c.henc.WriteField(hpack.HeaderField{Name: ":method", Value: req.Method})
	c.henc.WriteField(hpack.HeaderField{Name: ":scheme", Value: "http"})
	c.henc.WriteField(hpack.HeaderField{Name: ":authority", Value: req.Authority})
	c.henc.WriteField(hpack.HeaderField{Name: ":path", Value: req.Path})
	c.henc.WriteField(hpack.HeaderField{Name: "user-agent", Value: "celeris-bench"})
	if len(req.Body) > 0 {
		ct := req.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		c.henc.WriteField(hpack.HeaderField{Name: "content-type", Value: ct})
		c.henc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(len(req.Body))})
	}
	return c.fr.WriteHeaders(http2.HeadersFrameParam{
		StreamID:      id,
		BlockFragment: c.hbuf.Bytes(),
		EndStream:     len(req.Body) == 0,
		EndHeaders:    true,
	})
}

// writeBody sends body as DATA frames within both send windows (RFC 9113
// §6.9.1), stopping early if the stream ends (the server answered or reset it).
func (c *Conn) writeBody(st *stream, body []byte) {
	for off := 0; off < len(body); {
		c.mu.Lock()
		for c.err == nil && !st.ended && (c.connSend <= 0 || st.send <= 0) {
			c.cond.Wait()
		}
		if c.err != nil || st.ended {
			c.mu.Unlock()
			return
		}
		n := int64(len(body) - off)
		n = min(n, c.connSend, st.send, int64(c.peerMaxFrame))
		c.connSend -= n
		st.send -= n
		c.mu.Unlock()
		end := off + int(n)
		c.lockWrite()
		err := c.fr.WriteData(st.id, end == len(body), body[off:end])
		if c.unlockWrite(err) != nil {
			return
		}
		off = end
	}
}
