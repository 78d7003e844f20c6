package celeris

import (
	"net"

	"golang.org/x/sys/unix"
)

// rcvQueued is how many received bytes wait in c's socket unread (TIOCINQ), or
// -1 when it cannot tell.
func rcvQueued(c *net.TCPConn) int {
	rc, err := c.SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	_ = rc.Control(func(fd uintptr) {
		if v, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ); err == nil {
			n = v
		}
	})
	return n
}
