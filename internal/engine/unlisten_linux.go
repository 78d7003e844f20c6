//go:build linux

package engine

import (
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// unlisten makes the kernel refuse new connections to the engine's address while
// the event loops go on serving the open ones (graceful shutdown). gnet closes its
// listeners only together with its loops and does not expose them, so the engine
// finds them among the process's descriptors: the TCP sockets listening on its
// address. Each one is replaced, under the same descriptor number (dup3), by a
// listening Unix socket bound to a fresh abstract name that nobody connects to.
//
//   - The listening TCP socket loses its last reference and closes: new connection
//     attempts are refused (RST, ECONNREFUSED), and connections that finished their
//     handshake but were not accepted yet are reset, as when net/http closes its
//     listener.
//   - Its poller registration goes with it (epoll drops the entries of a released
//     file), and an event gnet already took for it meets the stand-in, whose accept
//     returns EAGAIN: gnet treats that as "nothing to accept". Shutting the TCP
//     socket down in place instead would make that accept fail with EINVAL, which
//     gnet treats as fatal and stops every loop.
//   - gnet closes the stand-in when it stops, as it would have closed the listener.
//
// With ReusePort every listener of the address in this process is taken, another
// engine's too if two share the port. It returns how many listeners it replaced.
func (e *Engine) unlisten() int {
	addr := e.addr.Load()
	if addr == nil {
		return 0
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	var lns []int
	for _, ent := range ents {
		fd, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		if link, err := os.Readlink("/proc/self/fd/" + ent.Name()); err != nil || !strings.HasPrefix(link, "socket:") {
			continue
		}
		if listensOn(fd, addr) {
			lns = append(lns, fd)
		}
	}
	if len(lns) == 0 {
		return 0
	}
	stand, err := standIn()
	if err != nil {
		e.cfg.Logger.Error("celeris: shutdown: new connections are closed, not refused", "err", err)
		return 0
	}
	defer unix.Close(stand)
	n := 0
	for _, fd := range lns {
		if unix.Dup3(stand, fd, unix.O_CLOEXEC) == nil {
			n++
		}
	}
	return n
}

// listensOn reports whether fd is a listening TCP socket bound to addr.
func listensOn(fd int, addr *net.TCPAddr) bool {
	if v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || v != 1 {
		return false
	}
	if v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL); err != nil || v != unix.IPPROTO_TCP {
		return false
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return false
	}
	a := tcpAddr(sa)
	return a != nil && a.Port == addr.Port && a.IP.Equal(addr.IP)
}

// standIn is a non-blocking listening Unix socket on an abstract name the kernel
// picks (autobind): accept on it returns EAGAIN.
func standIn() (int, error) {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err = unix.Bind(fd, &unix.SockaddrUnix{}); err == nil {
		err = unix.Listen(fd, 1)
	}
	if err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
