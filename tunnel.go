package celeris

import (
	"errors"
	"io"
	"net"
	"net/http"

	"github.com/celeris-dev/celeris/internal/conncore"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// An HTTP/2 or HTTP/3 stream opened by an extended CONNECT (RFC 8441, RFC
// 9220: WebSocket over HTTP/2 and HTTP/3) is a tunnel: the request's DATA is the client's byte stream and the
// response's DATA the server's. The protocol spoken over it (internal/ws) is the
// same httpmsg.Proto that serves an HTTP/1.1 connection after 101; here its
// transport is the stream, driven by the handler's goroutine:
//
//   - tunnel.run is the tunnel's loop, an engine of the connection's
//     conncore.Core, as the event loops are: it feeds the protocol what the body
//     reader delivered, wakes it when its writers asked, tells it of a drain
//     once, and hands what the protocol wrote to the stream's ResponseWriter
//     (Write and Flush), whose flow control blocks it when the client does not
//     read.
//   - a reader goroutine reads the request body into chunks for it (the body
//     reader blocks), one chunk at a time, so a protocol that stops consuming
//     stops the reads, and HTTP/2 flow control stops the client.
//
// So a tunnel holds two goroutines while it is open (the HTTP/1.1 path holds
// none): HTTP/2 streams have no event-loop callback of their own to hand a
// protocol. The handler that switched returns when the tunnel closes; the server
// then ends the stream (END_STREAM), or it was reset (the client went away).

// errTunnelInline: a tunnel needs a goroutine that may block.
var errTunnelInline = errors.New("celeris: an HTTP/2 tunnel (extended CONNECT) needs a route that is not Inline")

// isExtendedConnect reports whether c's request is an RFC 8441 (HTTP/2) or RFC
// 9220 (HTTP/3) extended CONNECT, and its :protocol.
func (c *Context) isExtendedConnect() (string, bool) {
	if c.req.ProtoMajor < 2 || c.req.Method != http.MethodConnect {
		return "", false
	}
	for i := len(c.req.Header) - 1; i >= 0; i-- {
		if c.req.Header[i].Name == ":protocol" {
			return c.req.Header[i].Value, true
		}
	}
	return "", false
}

// runTunnel answers an extended CONNECT with 200 and header and serves the stream
// with the protocol p builds until it closes.
func (c *Context) runTunnel(header []httpmsg.Field, p func(httpmsg.Conn) httpmsg.Proto) error {
	if c.route != nil && c.route.inline {
		return errTunnelInline
	}
	body := c.req.BodyReader
	if body == nil {
		return errNoSwitch // the client ended the stream with its HEADERS
	}
	if err := c.w.WriteHeader(http.StatusOK, append(c.header, header...)); err != nil {
		return err
	}
	c.written, c.streaming, c.status = true, true, http.StatusOK
	if err := c.w.Flush(); err != nil {
		return err
	}
	t := &tunnel{
		w:      c.w,
		body:   body,
		remote: c.req.RemoteAddr,
		wake:   make(chan struct{}, 1),
		data:   make(chan []byte),
		done:   make(chan struct{}),
	}
	t.core = conncore.NewFixed(t, p(t))
	t.run(c)
	return nil
}

// A tunnel is the Conn of the protocol it carries (internal/httpmsg, contract.go).
var _ httpmsg.Conn = (*tunnel)(nil)

type tunnel struct {
	w      httpmsg.ResponseWriter
	body   io.Reader
	remote net.Addr
	// core applies the per-connection rules to the protocol, as an engine's
	// does (internal/conncore: feeding, wake-ups, the drain once, the close
	// and OnClose once); the tunnel's goroutine only.
	core *conncore.Core

	out []byte // what the protocol wrote in this step (the tunnel's goroutine only)

	wake  chan struct{} // a token per coalesced wake-up
	data  chan []byte   // chunks of the request body; closed at its end
	done  chan struct{} // closed when run returns: the reader stops
	rdErr error         // why the body ended (set before data is closed)
}

// Write queues protocol output (httpmsg.Conn; the tunnel's goroutine only).
func (t *tunnel) Write(b []byte) { t.out = append(t.out, b...) }

// Wake asks the tunnel's goroutine for OnWake (httpmsg.Conn; any goroutine).
func (t *tunnel) Wake() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// Close ends the tunnel once its output is written (httpmsg.Conn).
func (t *tunnel) Close() { t.core.Close() }

// RemoteAddr is the client's address (httpmsg.Conn).
func (t *tunnel) RemoteAddr() net.Addr { return t.remote }

// read is the reader goroutine.
func (t *tunnel) read() {
	defer close(t.data)
	for {
		buf := make([]byte, 16<<10)
		n, err := t.body.Read(buf)
		if n > 0 {
			select {
			case t.data <- buf[:n]:
			case <-t.done:
				return
			}
		}
		if err != nil {
			t.rdErr = err
			return
		}
	}
}

// run is the tunnel's loop (the handler's goroutine), the engine of the
// tunnel's conncore.Core.
func (t *tunnel) run(c *Context) {
	defer close(t.done)
	go t.read()
	var in []byte // unconsumed input
	ctx := c.Context()
	shutdown := c.ShuttingDown()
	var closeErr error
	for !t.core.Closing() {
		data := t.data
		if len(in) >= 1<<20 {
			data = nil // the protocol is not consuming: stop reading the client
		}
		select {
		case b, ok := <-data:
			if !ok {
				closeErr = t.rdErr
				if errors.Is(closeErr, io.EOF) {
					closeErr = nil // END_STREAM: the client's side of the tunnel ended
				}
				// WebSocket cannot serve past the end of its input: what it
				// wrote goes out, then the tunnel closes.
				t.core.EndOfInput(len(t.out))
				t.core.Close()
				break
			}
			in = append(in, b...)
		case <-t.wake:
			t.core.Wake()
		case <-shutdown:
			shutdown = nil
			t.core.AskDrain() // the protocol is told once, by this Wake
			t.core.Wake()
		case <-ctx.Done():
			closeErr = ctx.Err() // the stream was reset or the connection is gone
			t.core.Close()
		}
		if len(in) > 0 && !t.core.Closing() {
			n := t.core.Feed(in, 0)
			in = append(in[:0], in[n:]...)
		}
		if len(t.out) > 0 {
			if _, err := t.w.Write(t.out); err != nil || t.w.Flush() != nil {
				t.core.Close()
				closeErr = err
			}
			t.out = t.out[:0]
		}
		// Write returned: the stream took it (or blocked until it could).
		if t.core.Flushed(0) {
			t.core.Wake()
		}
	}
	t.core.Closed(closeErr)
	if cl, ok := t.body.(io.Closer); ok {
		_ = cl.Close() // ends a Read still blocked (full duplex), drops the rest
		// Wait for the reader goroutine: it must not touch the stream once the
		// handler returned and the stream may be recycled (its next Read fails
		// at once, so this ends).
		for range t.data {
		}
	}
}
