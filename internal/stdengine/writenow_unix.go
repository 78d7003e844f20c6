//go:build unix

package stdengine

import "syscall"

// writeNow writes as much of b as the socket takes without blocking, with one
// write(2) on the owner goroutine, and returns how much that was (0 when the
// socket buffer is full, on any error, or when the connection has no file
// descriptor): the caller queues the rest for the writer goroutine, which meets
// any error again and handles it. Owner only, and only while the writer is idle.
func (c *conn) writeNow(b []byte) int {
	if c.rc == nil || len(b) == 0 {
		return 0
	}
	c.nowBuf, c.nowN = b, 0
	// The function returns true: one attempt, never a wait for writability.
	// RawConn.Write still honours the write deadline and a closed socket.
	_ = c.rc.Write(c.writeFdFunc)
	c.nowBuf = nil
	return c.nowN
}

// writeFd is the function writeNow runs on the socket (allocated once per
// connection as c.writeFdFunc).
func (c *conn) writeFd(fd uintptr) bool {
	if n, err := syscall.Write(int(fd), c.nowBuf); err == nil && n > 0 {
		c.nowN = n
	}
	return true
}

// rawConnOf returns the socket of nc for writeNow, nil when it has none.
func rawConnOf(nc any) syscall.RawConn {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}
