package celerish3

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"
)

// closeGrace is how long a connection that answered its last request after
// GOAWAY waits for the client to close it (RFC 9114 §5.2: clients close once
// their requests are done; quic-go's does) before the server closes it itself.
// Closing at once could drop response bytes not yet acknowledged.
const closeGrace = time.Second

// conn is one HTTP/3 connection: the QUIC connection, the server's control
// stream and the client's unidirectional streams. Each request stream runs on
// a goroutine of its own while it is served (reqStream.serve, on one of the
// server's workers); mu guards the fields below it.
type conn struct {
	srv      *Server
	qc       *quic.Conn
	tlsState atomic.Pointer[tls.ConnectionState] // after the handshake; read only, shared by the requests
	control  *quic.SendStream                    // the server's control stream

	mu         sync.Mutex
	active     int            // request streams being served
	nextID     quic.StreamID  // the lowest client stream ID not yet accepted
	goAwaySent bool           // GOAWAY(nextID) went out: later streams are rejected
	graceTimer *time.Timer    // closes the connection closeGrace after draining
	closeErr   error          // the connection error that closed the connection
	uniSeen    [4]bool        // the client's critical stream types open (uniStreamRule)
	peer       peerSettings   // the client's SETTINGS, once they arrived (kept for the QPACK and field-size limits it may ask of responses)
	done       chan struct{}  // closed when serve returns
	streams    sync.WaitGroup // request and unidirectional stream goroutines
}

func newConn(srv *Server, qc *quic.Conn) *conn {
	return &conn{srv: srv, qc: qc, done: make(chan struct{})}
}

// tls returns the connection's TLS state. A 0-RTT request, served before the
// handshake completed, gets the state so far (no client certificate yet).
func (c *conn) tls() *tls.ConnectionState {
	if st := c.tlsState.Load(); st != nil {
		return st
	}
	st := c.qc.ConnectionState().TLS
	select {
	case <-c.qc.HandshakeComplete():
		c.tlsState.Store(&st)
	default:
	}
	return &st
}

// serve opens the control stream, then accepts request streams until the
// connection closes.
func (c *conn) serve() {
	defer func() {
		c.streams.Wait()
		c.srv.forget(c)
		close(c.done)
	}()
	ctrl, err := c.qc.OpenUniStream()
	if err != nil {
		c.closeWithError(connErr(ErrCodeInternal, "cannot open the control stream"))
		return
	}
	// RFC 9114 §6.2.1: each side opens its control stream and sends SETTINGS
	// as the first frame.
	b := quicvarint.Append(nil, streamTypeControl)
	b = appendSettingsFrame(b, c.srv.maxFieldSection, c.srv.extendedConnect)
	if _, err := ctrl.Write(b); err != nil {
		return
	}
	c.mu.Lock()
	c.control = ctrl
	goAway := c.goAwaySent // Drain came before the control stream
	c.mu.Unlock()
	if goAway {
		c.sendGoAway(0)
	}
	c.streams.Go(c.acceptUni)
	ctx := c.qc.Context()
	for {
		str, err := c.qc.AcceptStream(ctx)
		if err != nil {
			break
		}
		c.mu.Lock()
		if c.goAwaySent {
			c.mu.Unlock()
			// §5.2: requests on streams at or above the GOAWAY's identifier
			// are rejected, so that the client may retry them elsewhere.
			str.CancelRead(quic.StreamErrorCode(ErrCodeRequestRejected))
			str.CancelWrite(quic.StreamErrorCode(ErrCodeRequestRejected))
			continue
		}
		c.nextID = str.StreamID() + 4
		c.active++
		c.mu.Unlock()
		c.streams.Add(1)
		c.srv.workers.run(func() {
			defer c.streams.Done()
			s := streamPool.Get().(*reqStream)
			s.reset()
			s.c, s.str = c, str
			s.serve(str.Context())
			s.reset()
			streamPool.Put(s)
			c.streamDone()
		})
	}
}

// streamDone counts a finished request; a draining connection without
// requests left closes soon.
func (c *conn) streamDone() {
	c.mu.Lock()
	c.active--
	if c.goAwaySent && c.active == 0 && c.graceTimer == nil {
		c.graceTimer = time.AfterFunc(closeGrace, func() {
			_ = c.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
		})
	}
	c.mu.Unlock()
}

// goAway starts the graceful close (RFC 9114 §5.2): GOAWAY with the first
// stream ID the server will not process, then the close once the requests
// below it are answered. It returns at once; a second call does nothing.
func (c *conn) goAway() {
	c.mu.Lock()
	if c.goAwaySent {
		c.mu.Unlock()
		return
	}
	c.goAwaySent = true
	id, ready := c.nextID, c.control != nil
	if c.active == 0 {
		c.graceTimer = time.AfterFunc(closeGrace, func() {
			_ = c.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
		})
	}
	c.mu.Unlock()
	if ready {
		c.sendGoAway(id) // else serve sends it after SETTINGS
	}
}

// sendGoAway writes GOAWAY(id) on the control stream. The write may block on
// flow control; it returns when the connection closes.
func (c *conn) sendGoAway(id quic.StreamID) {
	p := quicvarint.Append(nil, uint64(id))
	frame := append(appendFrameHeader(nil, frameGoAway, uint64(len(p))), p...)
	go func() { _, _ = c.control.Write(frame) }()
}

// closeWithError closes the connection for a connection error (RFC 9114 §8),
// logging it once (it is the client's doing: at debug level).
func (c *conn) closeWithError(err error) {
	code, _, ok := codeOf(err)
	if !ok {
		code = ErrCodeInternal
	}
	c.mu.Lock()
	first := c.closeErr == nil
	if first {
		c.closeErr = err
	}
	c.mu.Unlock()
	if !first {
		return
	}
	c.srv.logger.Debug("celerish3: connection error", "remote", c.qc.RemoteAddr().String(), "err", err)
	_ = c.qc.CloseWithError(quic.ApplicationErrorCode(code), code.String())
}

// awaitHandshake returns once the QUIC handshake is complete, at once unless
// the connection accepts 0-RTT; false when ctx ends first (the connection
// closed, or the handshake timed out).
func (c *conn) awaitHandshake(ctx context.Context) bool {
	if !c.srv.allow0RTT {
		return true
	}
	select {
	case <-c.qc.HandshakeComplete():
		return true
	case <-ctx.Done():
		return false
	}
}

// acceptUni serves the client's unidirectional streams (RFC 9114 §6.2).
func (c *conn) acceptUni() {
	ctx := c.qc.Context()
	for {
		str, err := c.qc.AcceptUniStream(ctx)
		if err != nil {
			return
		}
		c.streams.Go(func() { c.serveUni(str) })
	}
}

// serveUni reads a unidirectional stream's type, then its content for as long
// as it is open.
func (c *conn) serveUni(str *quic.ReceiveStream) {
	var buf [64]byte
	n := 0
	var typ uint64
	for {
		k, err := str.Read(buf[n:])
		n += k
		v, used, perr := quicvarint.Parse(buf[:n])
		if perr == nil {
			typ = v
			n = copy(buf[:], buf[used:n])
			break
		}
		if err != nil {
			return // the stream ended or was reset before its type: nothing to do
		}
	}
	c.mu.Lock()
	critical, ignore, err := uniStreamRule(typ, &c.uniSeen)
	c.mu.Unlock()
	if err != nil {
		c.closeWithError(err)
		return
	}
	if ignore {
		str.CancelRead(quic.StreamErrorCode(ErrCodeStreamCreation))
		return
	}
	_ = critical
	var feed func([]byte) (int, error)
	switch typ {
	case streamTypeControl:
		var p controlParser
		feed = func(b []byte) (int, error) {
			had := p.sawSettings
			used, err := p.feed(b)
			if !had && p.sawSettings {
				c.mu.Lock()
				c.peer = p.settings
				c.mu.Unlock()
			}
			return used, err
		}
	case streamTypeQPACKEncoder:
		feed = encoderStreamParser{}.feed
	default:
		feed = decoderStreamParser{}.feed
	}
	c.readCritical(str, buf[:n], feed)
}

// readCritical feeds a critical stream's bytes to its parser until the
// stream or the connection ends. The stream must stay open for the
// connection's life (RFC 9114 §6.2.1, RFC 9204 §4.2).
func (c *conn) readCritical(str *quic.ReceiveStream, first []byte, feed func([]byte) (int, error)) {
	// The buffer starts small (an idle connection holds three of them) and
	// grows to a whole control frame when one needs it.
	buf := make([]byte, 0, 128)
	buf = append(buf, first...)
	for {
		used, err := feed(buf)
		if err != nil {
			c.closeWithError(err)
			return
		}
		buf = buf[:copy(buf, buf[used:])]
		if len(buf) == cap(buf) {
			if cap(buf) >= maxControlFrame+64 {
				// Cannot happen: feed consumes any frame larger than this
				// or refuses it.
				c.closeWithError(connErr(ErrCodeExcessiveLoad, "control stream frame too large"))
				return
			}
			buf = append(make([]byte, 0, min(4*cap(buf), maxControlFrame+64)), buf...)
		}
		k, rerr := str.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if rerr != nil {
			if c.qc.Context().Err() != nil {
				return // the connection is closing
			}
			if rerr == io.EOF || errors.As(rerr, new(*quic.StreamError)) {
				if _, err := feed(buf); err != nil {
					c.closeWithError(err)
					return
				}
				c.closeWithError(errCriticalClosed)
			}
			return
		}
	}
}
