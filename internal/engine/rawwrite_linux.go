package engine

import (
	"syscall"
	"unsafe"
)

// rawWrite writes b to fd with write(2) through syscall.RawSyscall, which skips the
// runtime's entersyscall/exitsyscall bookkeeping (two locked instructions and about
// 230 instructions per call): the socket is non-blocking, so the call never
// blocks. It reports false, having written nothing, on any error (EAGAIN included):
// the caller then hands b to gnet, whose own write sees the same condition and
// buffers b or closes the connection as it always does.
func rawWrite(fd int, b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, true
	}
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, false
	}
	return int(n), true
}
