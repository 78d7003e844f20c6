package celeris

import "syscall"

// setRcvBuf sets a socket's receive buffer (SO_RCVBUF).
func setRcvBuf(fd uintptr, n int) error {
	return syscall.SetsockoptInt(syscall.Handle(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, n)
}
