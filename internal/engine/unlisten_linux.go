//go:build linux

package engine

import (
	"net"
	"reflect"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// unlisten makes the kernel refuse new connections to the engine's address while
// the event loops go on serving the open ones (graceful shutdown). gnet closes its
// listeners only together with its loops, so the engine takes them over itself:
// each listener's descriptor gets, under the same number (dup3), a listening Unix
// socket bound to a fresh abstract name that nobody connects to.
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
// The descriptors are gnet's own listeners (gnetListeners), each checked again to
// be a TCP socket listening on the engine's address just before it is replaced;
// lnMu keeps gnet's shutdown (OnShutdown comes first), after which gnet closes them
// and their numbers may be reused, out of the way. It returns how many listeners it replaced.
func (e *Engine) unlisten() int {
	select {
	case <-e.booted: // gnet registered every loop and listener
	default:
		return 0
	}
	e.lnMu.Lock()
	defer e.lnMu.Unlock()
	addr := e.addr.Load()
	if e.lnClosed || e.bootErr != nil || addr == nil {
		return 0
	}
	fds, ok := gnetListeners(e.eng)
	if !ok {
		e.cfg.Logger.Warn("celeris: shutdown: gnet's listeners not found; new connections are accepted and closed, not refused")
		return 0
	}
	stand := -1
	n := 0
	for _, fd := range fds {
		if !listensOn(fd, addr) {
			continue
		}
		if stand < 0 {
			var err error
			if stand, err = standIn(); err != nil {
				e.cfg.Logger.Error("celeris: shutdown: new connections are accepted and closed, not refused", "err", err)
				return 0
			}
			defer unix.Close(stand)
		}
		if unix.Dup3(stand, fd, unix.O_CLOEXEC) == nil {
			n++
		}
	}
	return n
}

// gnetListeners returns the descriptors of eng's listeners: the engine's own (used
// by the main reactor, or by the first loop with ReusePort) and every event loop's
// (one per loop with ReusePort). gnet v2 does not export them; they are read by
// name through reflection, and ok is false when the layout is not gnet v2.10's.
func gnetListeners(eng gnet.Engine) (fds []int, ok bool) {
	defer func() {
		if recover() != nil {
			fds, ok = nil, false // a layout other than the one expected
		}
	}()
	ev := reflect.ValueOf(eng).FieldByName("eng")
	if ev.Kind() != reflect.Pointer || ev.IsNil() {
		return nil, false
	}
	ev = ev.Elem()
	seen := map[int]bool{}
	add := func(m reflect.Value) bool {
		if m.Kind() != reflect.Map {
			return false
		}
		for it := m.MapRange(); it.Next(); {
			ln := it.Value()
			if ln.Kind() != reflect.Pointer || ln.IsNil() {
				return false
			}
			f := ln.Elem().FieldByName("fd")
			if f.Kind() != reflect.Int {
				return false
			}
			if fd := int(f.Int()); fd > 0 && !seen[fd] {
				seen[fd] = true
				fds = append(fds, fd)
			}
		}
		return true
	}
	if !add(ev.FieldByName("listeners")) {
		return nil, false
	}
	if in := ev.FieldByName("ingress"); in.Kind() == reflect.Pointer && !in.IsNil() {
		if !add(in.Elem().FieldByName("listeners")) {
			return nil, false
		}
	}
	lb := ev.FieldByName("eventLoops") // an interface holding *xxxLoadBalancer
	if lb.Kind() != reflect.Interface || lb.IsNil() || lb.Elem().Kind() != reflect.Pointer {
		return nil, false
	}
	loops := lb.Elem().Elem().FieldByName("eventLoops") // promoted from baseLoadBalancer
	if loops.Kind() != reflect.Slice {
		return nil, false
	}
	for i := 0; i < loops.Len(); i++ {
		el := loops.Index(i)
		if el.Kind() != reflect.Pointer || el.IsNil() || !add(el.Elem().FieldByName("listeners")) {
			return nil, false
		}
	}
	return fds, true
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
