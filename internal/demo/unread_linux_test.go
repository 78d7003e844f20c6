package demo

import (
	"crypto/tls"
	"net"

	"golang.org/x/sys/unix"
)

// unreadBytes is what the kernel holds for tc's socket, received and not read
// (-1: unknown).
func unreadBytes(tc *tls.Conn) int {
	sc, err := tc.NetConn().(*net.TCPConn).SyscallConn()
	if err != nil {
		return -1
	}
	n := -1
	_ = sc.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.SIOCINQ) })
	return n
}
