//go:build unix

package celeris

import "syscall"

// inheritSupported: sockets are inherited by descriptor number (activation.go).
const inheritSupported = true

func closeOnExec(fd int) { syscall.CloseOnExec(fd) }

// socketStream reports whether fd is a socket (ok) and a SOCK_STREAM one.
func socketStream(fd int) (stream, ok bool) {
	typ, err := syscall.GetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_TYPE)
	if err != nil {
		return false, false
	}
	return typ == syscall.SOCK_STREAM, true
}
