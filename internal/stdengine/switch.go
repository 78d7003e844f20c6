package stdengine

import (
	"errors"
	"net"
	"time"
)

// errHijacked ends the owner of a connection that left the engine.
var errHijacked = errors.New("stdengine: connection hijacked")

// Hijack takes the connection out of the engine (httpmsg.Hijacker; owner only):
// the output batch and the writer's queue are written first, then the net.Conn
// (the TLS connection over TLS) goes to the caller with the input read past the
// request. The owner returns without closing it and without OnClose for the
// protocol that gave it away (conncore.Core.Hijacked).
func (c *conn) Hijack() (nc net.Conn, buffered, pending []byte, err error) {
	if c.core.Closing() || c.core.InputEnded() || c.aborted.Load() {
		return nil, nil, nil, errHijacked
	}
	c.flush()
	c.emit()
	c.wr.end()
	<-c.wr.done // bounded: every write has a deadline
	if c.wr.failed.Load() {
		return nil, nil, nil, errHijacked
	}
	if c.r < c.w {
		buffered = append([]byte(nil), c.in[c.r:c.w]...)
		c.r, c.w = 0, 0
	}
	c.live.Store(false) // Wake must not move the deadline of a conn given away
	_ = c.nc.SetDeadline(time.Time{})
	c.core.Hijacked() // no more calls to the protocol, OnClose included
	return c.nc, buffered, nil, nil
}
