package epoll

import (
	"syscall"
	"unsafe"
)

// The loop's socket reads and writes. The sockets are non-blocking, so the
// calls never block: they go through syscall.RawSyscall, which skips the
// runtime's entersyscall/exitsyscall bookkeeping (as the gnet engine's
// rawWrite does). This file is the package's only use of unsafe: a slice's
// address for the kernel.

// rawRead reads into b; n is -1 with the errno on failure, 0 at the end of
// input.
func rawRead(fd int, b []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), 0
}

// rawWrite writes b (not empty).
func rawWrite(fd int, b []byte) (int, syscall.Errno) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return 0, errno
	}
	return int(n), 0
}

// rawWritev writes a then b (both not empty) in one writev(2).
func rawWritev(fd int, a, b []byte) (int, syscall.Errno) {
	iov := [2]syscall.Iovec{{Base: &a[0]}, {Base: &b[0]}}
	iov[0].SetLen(len(a))
	iov[1].SetLen(len(b))
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), 2)
	if errno != 0 {
		return 0, errno
	}
	return int(n), 0
}
