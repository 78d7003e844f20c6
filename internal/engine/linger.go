//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import (
	"golang.org/x/sys/unix"

	"github.com/celeris-dev/celeris/internal/conncore"
)

// Lingering close.
//
// When the server closes a connection while the client may still be sending (a
// 413 or 400 answered before the request body ended, an error in the middle of a
// pipelined batch), closing the socket with input unread makes the kernel send a
// reset, and a reset that reaches the client before it read the answer destroys
// the answer in its receive buffer: it sees "connection reset" or "broken pipe"
// instead of the 413. So, as net/http (closeWriteAndWait) and nginx
// (lingering_close) do, the engine first shuts down its sending side once the
// answer is written, which tells the client the answer is complete, then reads
// and drops what still comes until the client closes or conncore.LingerTime
// passes, and only then closes.

// startLinger shuts down the sending side and arms the linger deadline (loop
// only; gnet holds no output). It reports false when the shutdown failed, and
// the connection should simply close.
func (c *conn) startLinger() bool {
	if unix.Shutdown(c.gc.Fd(), unix.SHUT_WR) != nil {
		return false
	}
	c.lingering = true
	c.releaseInput()
	c.resumeRead() // the client's rest must be read, and its end of input seen
	c.deadline.Store(c.eng.now.Load() + int64(conncore.LingerTime))
	return true
}

// linger drops what arrives on a lingering connection (loop only).
func (c *conn) linger() {
	if n := c.gc.InboundBuffered(); n > 0 {
		_, _ = c.gc.Discard(n)
	}
}
