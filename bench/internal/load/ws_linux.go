package load

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/celeris-dev/celeris/bench/internal/wsclient"
)

// wsConn is one connection, owned by its loop's goroutine.
type wsConn struct {
	fd      int
	parser  wsclient.Parser
	out     []byte // the part of the frame not written yet
	sent    time.Time
	pollOut bool // waiting for EPOLLOUT (the socket took part of a frame)
	echoed  bool // a round trip completed
}

// wsLoop is one epoll loop on a locked OS thread.
type wsLoop struct {
	p     *WSPool
	id    int
	epfd  int
	add   chan *wsConn // connections dialled, to register
	conns []*wsConn    // by epoll data; nil for a closed slot
	free  []int32      // free slots
	buf   []byte       // read buffer, shared by the loop's connections
	done  chan struct{}
	going bool // the connections registered so far have sent their first message
}

func (p *WSPool) start(n int) {
	for i := range n {
		l := &wsLoop{p: p, id: i, epfd: -1, add: make(chan *wsConn, 1024), buf: make([]byte, 64<<10), done: make(chan struct{})}
		fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
		if err != nil {
			p.fail(fmt.Errorf("epoll_create1: %w", err))
			close(l.done)
		} else {
			l.epfd = fd
			go l.run()
		}
		p.loops = append(p.loops, l)
	}
}

// Grow dials connections until there are n (in parallel, bounded), each
// upgraded and handed to a loop, which sends its first message.
func (p *WSPool) Grow(n int) {
	if n <= p.n {
		return
	}
	raddr, err := net.ResolveTCPAddr("tcp4", p.t.Addr)
	if err != nil {
		for range n - p.n {
			p.fail(err)
		}
		p.n = n
		return
	}
	var ip [4]byte
	copy(ip[:], raddr.IP.To4())
	hs := wsclient.AppendHandshake(nil, p.t.Addr, p.t.Path)
	ids := make(chan int)
	var wg sync.WaitGroup
	for range min(wsDialers, n-p.n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sa := &unix.SockaddrInet4{Port: raddr.Port, Addr: ip} // Connect writes into it: one per dialer
			for id := range ids {
				if p.stopped.Load() {
					continue
				}
				c, err := dialWS(sa, hs, len(p.t.Message), dialTimeout)
				if err != nil {
					p.fail(err)
					continue
				}
				l := p.loops[id%len(p.loops)]
				select {
				case l.add <- c:
				case <-l.done:
					closeRST(c.fd)
				}
			}
		}()
	}
	for id := p.n; id < n; id++ {
		ids <- id
	}
	close(ids)
	wg.Wait()
	p.n = n
	// Only now do the connections start sending (each loop sends the first
	// messages at its next turn): echo traffic would slow the handshakes of
	// the connections still being dialled down to a crawl.
	p.going.Store(true)
}

// Stop ends every loop; each closes its connections with a reset (no
// TIME_WAIT left on the loader's ports). It reports whether every loop ended
// within stopTimeout.
func (p *WSPool) Stop() bool {
	p.stopped.Store(true)
	deadline := time.After(stopTimeout)
	for _, l := range p.loops {
		select {
		case <-l.done:
		case <-deadline:
			return false
		}
	}
	return true
}

// dialWS connects (blocking, bounded by timeout), upgrades, and returns the
// connection in non-blocking mode.
func dialWS(sa *unix.SockaddrInet4, handshake []byte, want int, timeout time.Duration) (*wsConn, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			closeRST(fd)
		}
	}()
	tv := unix.NsecToTimeval(timeout.Nanoseconds())
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv) // bounds connect too
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := connectFD(fd, sa, timeout); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	for b := handshake; len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("handshake write: %w", err)
		}
		b = b[n:]
	}
	buf := make([]byte, 0, 1024)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Read(fd, buf[len(buf):cap(buf)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("handshake read: %w", err)
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: closed during the handshake: %q", wsclient.ErrHandshake, buf)
		}
		buf = buf[:len(buf)+n]
		h, err := wsclient.CheckHandshake(buf)
		if err != nil {
			return nil, err
		}
		if h > 0 {
			if h != len(buf) {
				return nil, fmt.Errorf("%w: the server sent %d bytes before any message", wsclient.ErrProtocol, len(buf)-h)
			}
			break
		}
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		return nil, err
	}
	ok = true
	return &wsConn{fd: fd, parser: wsclient.Parser{Want: want}}, nil
}

// connectFD connects the blocking socket fd to sa within timeout. connect(2)
// is never restarted after a signal (the Go runtime's preemption signal
// lands on this thread at any time): it returns EINTR and the connection
// goes on in the background, so connectFD then waits for the socket to turn
// writable and reads the outcome from SO_ERROR.
func connectFD(fd int, sa unix.Sockaddr, timeout time.Duration) error {
	err := unix.Connect(fd, sa)
	if err != unix.EINTR && err != unix.EINPROGRESS {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		ms := int(time.Until(deadline) / time.Millisecond)
		if ms <= 0 {
			return unix.ETIMEDOUT
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		n, err := unix.Poll(fds, ms)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			continue // the deadline check above ends it
		}
		soErr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return err
		}
		if soErr != 0 {
			return unix.Errno(soErr)
		}
		return nil
	}
}

// closeRST closes fd with SO_LINGER 0: a reset, no TIME_WAIT.
func closeRST(fd int) {
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	unix.Close(fd)
}

// rawRead and rawWrite skip the runtime's syscall bookkeeping: the sockets
// are non-blocking, so these calls never block.
func rawRead(fd int, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

func rawWrite(fd int, p []byte) (int, syscall.Errno) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
	return int(n), e
}

func (l *wsLoop) run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer close(l.done)
	defer l.closeAll()
	events := make([]unix.EpollEvent, 512)
	for !l.p.stopped.Load() {
		l.register()
		if !l.going && l.p.going.Load() {
			l.going = true
			for slot, c := range l.conns {
				if c != nil {
					l.send(int32(slot), c)
				}
			}
		}
		n, err := unix.EpollWait(l.epfd, events, wsPollTimeout)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			l.p.fail(fmt.Errorf("epoll_wait: %w", err))
			return
		}
		for i := range n {
			ev := &events[i]
			c := l.conns[ev.Fd]
			if c == nil {
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 && len(c.out) > 0 {
				if !l.flush(ev.Fd, c) {
					continue
				}
			}
			if ev.Events&(unix.EPOLLIN|unix.EPOLLERR|unix.EPOLLHUP) != 0 {
				l.read(ev.Fd, c)
			}
		}
	}
}

// register adds the connections dialled since the last look; once the pool
// is going, each sends its first message at once.
func (l *wsLoop) register() {
	for {
		select {
		case c := <-l.add:
			var slot int32
			if k := len(l.free); k > 0 {
				slot = l.free[k-1]
				l.free = l.free[:k-1]
				l.conns[slot] = c
			} else {
				slot = int32(len(l.conns))
				l.conns = append(l.conns, c)
			}
			ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: slot}
			if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, c.fd, &ev); err != nil {
				l.drop(slot, c, fmt.Errorf("epoll_ctl: %w", err))
				continue
			}
			if l.going {
				l.send(slot, c)
			}
		default:
			return
		}
	}
}

// send writes the message; what the socket does not take now is written on
// EPOLLOUT.
func (l *wsLoop) send(slot int32, c *wsConn) {
	c.sent = time.Now()
	c.out = l.p.frame
	l.flush(slot, c)
}

// flush writes c.out; it reports false if the connection was dropped. While
// the socket is full the connection also waits for EPOLLOUT.
func (l *wsLoop) flush(slot int32, c *wsConn) bool {
	for len(c.out) > 0 {
		n, e := rawWrite(c.fd, c.out)
		if e == syscall.EINTR {
			continue
		}
		if e == syscall.EAGAIN {
			return l.pollOut(slot, c, true)
		}
		if e != 0 {
			l.drop(slot, c, fmt.Errorf("write: %w", e))
			return false
		}
		c.out = c.out[n:]
	}
	return l.pollOut(slot, c, false)
}

// pollOut adds or removes EPOLLOUT when that changes.
func (l *wsLoop) pollOut(slot int32, c *wsConn, on bool) bool {
	if c.pollOut == on {
		return true
	}
	c.pollOut = on
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: slot}
	if on {
		ev.Events |= unix.EPOLLOUT
	}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_MOD, c.fd, &ev); err != nil {
		l.drop(slot, c, fmt.Errorf("epoll_ctl: %w", err))
		return false
	}
	return true
}

// read takes what arrived and, when the echo is complete, records the round
// trip and sends the next message.
func (l *wsLoop) read(slot int32, c *wsConn) {
	n, e := rawRead(c.fd, l.buf)
	switch {
	case e == syscall.EAGAIN || e == syscall.EINTR:
		return
	case e != 0:
		l.drop(slot, c, fmt.Errorf("read: %w", e))
		return
	case n == 0:
		l.drop(slot, c, errors.New("the server closed the connection"))
		return
	}
	done, err := c.parser.Feed(l.buf[:n])
	if err != nil {
		l.drop(slot, c, err)
		return
	}
	switch {
	case done == 0:
		return
	case done > 1 || len(c.out) > 0 || (l.p.idle && c.echoed):
		l.drop(slot, c, fmt.Errorf("%w: an echo of a message not sent", wsclient.ErrProtocol))
		return
	}
	l.p.rec.Done(l.id, 200, time.Since(c.sent))
	if !c.echoed {
		c.echoed = true
		l.p.answered.Add(1)
	}
	if !l.p.idle {
		l.send(slot, c)
	}
}

// drop closes a failed connection and counts it.
func (l *wsLoop) drop(slot int32, c *wsConn, err error) {
	l.p.fail(err)
	unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
	closeRST(c.fd)
	l.conns[slot] = nil
	l.free = append(l.free, slot)
}

func (l *wsLoop) closeAll() {
	for i, c := range l.conns {
		if c != nil {
			closeRST(c.fd)
			l.conns[i] = nil
		}
	}
	for {
		select {
		case c := <-l.add:
			closeRST(c.fd)
		default:
			unix.Close(l.epfd)
			return
		}
	}
}
