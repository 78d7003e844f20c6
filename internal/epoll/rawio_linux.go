package epoll

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loop's socket reads and writes, and its poll that does not wait. None
// of them blocks (the sockets are non-blocking), so they go through
// syscall.RawSyscall, which skips the
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

// pollNow is epoll_wait with a zero timeout, which never blocks: through
// RawSyscall6, without the runtime's system-call bookkeeping. A busy loop
// finds events ready this way; only when none are does it wait in
// unix.EpollWait, where the runtime may hand its P to another goroutine.
func pollNow(epfd int, events []unix.EpollEvent) int {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if errno != 0 {
		return 0
	}
	return int(n)
}
