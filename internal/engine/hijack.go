//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import (
	"errors"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// errHijacked: the connection left the engine (Hijack); gnet closes its own fd.
var errHijacked = errors.New("engine: connection hijacked")

// Hijack takes the connection out of the engine (httpmsg.Hijacker; loop only): it
// duplicates the socket's descriptor into a net.Conn served by the Go runtime's
// poller, hands over the bytes gnet had read but the protocol had not consumed,
// and closes gnet's copy once this callback returns. Output the engine still
// holds (earlier pipelined answers, this callback's batch) is returned in pending:
// the caller writes it first, in order.
func (c *conn) Hijack() (nc net.Conn, buffered, pending []byte, err error) {
	if c.closed.Load() || c.det.Load() != nil || c.core.Closing() {
		return nil, nil, nil, errHijacked
	}
	c.resumeRead()
	if c.gc.OutboundBuffered() > 0 {
		out, ok := takeOutbound(c.gc)
		if !ok {
			return nil, nil, nil, errors.New("engine: hijack: gnet's output buffer is unavailable")
		}
		pending = out
	}
	pending = append(pending, c.out...)
	c.out = c.out[:0]
	fd, err := c.gc.Dup()
	if err != nil {
		return nil, nil, nil, err
	}
	f := os.NewFile(uintptr(fd), "celeris-hijacked")
	nc, err = net.FileConn(f) // duplicates the descriptor again
	_ = f.Close()
	if err != nil {
		_ = unix.Close(fd)
		return nil, nil, nil, err
	}
	if c.buffered() > 0 {
		c.takeInput() // what gnet holds joins the engine's unconsumed input (input.go)
		buffered = append([]byte(nil), c.in[c.inOff:]...)
		c.releaseInput()
	}
	c.core.Hijacked() // the protocol gets no more calls; gnet closes its copy of the descriptor
	c.deadline.Store(0)
	return nc, buffered, pending, nil
}
