package stdengine

import (
	"time"

	"github.com/celeris-dev/celeris/internal/conncore"
)

// A lingering close (conncore.LingerTime): when the server closes while the
// client may still be sending, it shuts its sending side down first (the
// answer is complete), then reads and drops what still comes until the client
// closes or the time passes. Closing with input unread would make the kernel
// reset the connection, destroying the answer in the client's buffer.

// closeWriter is a connection whose sending side can be shut down alone
// (*net.TCPConn, *tls.Conn).
type closeWriter interface {
	CloseWrite() error
}

// lingerClose is that wait (owner goroutine, after the writer ended).
func (c *conn) lingerClose() {
	cw, ok := c.nc.(closeWriter)
	if !ok || cw.CloseWrite() != nil {
		return
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(conncore.LingerTime))
	buf := c.small[:]
	for {
		if _, err := c.nc.Read(buf); err != nil {
			return
		}
	}
}
