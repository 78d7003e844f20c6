package epoll

import (
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/celeris-dev/celeris/internal/directrun"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Event tags, in the epoll event's data next to the descriptor.
const (
	tagConn     = 0
	tagListener = 1
	tagWake     = 2
)

// loop is one event loop: an epoll instance, its eventfd, and the
// connections registered in it.
type loop struct {
	e    *Engine
	epfd int
	evfd int

	// Owned by the loop.
	conns    []*conn // by descriptor
	buf      []byte  // read buffer
	events   [256]unix.EpollEvent
	now      int64 // unix ns, refreshed after every epoll_wait
	nextDue  int64 // next deadline scan
	calls    uint32
	freeIn   [][]byte // empty input buffers for reuse
	drained  bool     // the engine's drain reached this loop's connections
	lnOff    bool     // the listener is out of this loop's epoll (out of descriptors)
	warnedFD bool     // "out of descriptors" was logged
	wakeBuf  [8]byte
	own      owner // the loop's goroutine, checked in race builds

	// The batches in progress, in loop fields so that a goroutine taking the
	// loop over (a direct run's move, direct_linux.go) goes on with them:
	// events[evNext:evN] from the last epoll_wait, woke[wakeNext:] the
	// wake-ups taken from ready.
	evNext, evN int
	woke        []*conn
	wakeNext    int

	// Direct runs (direct_linux.go).
	directOK   bool          // a callback that may ask for a direct run is in progress
	direct     httpmsg.Task  // the run asked for during the current callback
	directConn *conn         // whose protocol asked for direct
	runTask    httpmsg.Task  // the run in progress: set before its start, read by whoever moves it
	running    atomic.Int32  // the descriptor of the connection whose run is in progress, else -1
	owed       *conn         // the connection of the run in progress: its settle is owed
	dstate     atomic.Uint64 // directrun.State of the last run
	dstateTick atomic.Uint64 // dstate at the watcher's previous tick
	watchState atomic.Int32  // directrun.Listed or Unlisted
	dv         directrun.Vars
	ended      chan struct{} // closed once the loop stopped, by whichever goroutine owned it

	mu       sync.Mutex
	ready    []*conn    // guarded by mu: connections woken by other goroutines
	spare    []*conn    // guarded by mu
	incoming []accepted // guarded by mu: connections accepted by another loop, for this one
	dead     bool       // guarded by mu: evfd is closed; no more wake-ups
	// hasWork: something was queued (ready, incoming) or the engine's state
	// changed (drain, stop) since the loop last looked; sleeping: the loop is
	// in, or about to enter, its blocking epoll_wait. A waker writes the
	// eventfd only when the loop sleeps: a loop at work finds the queue before
	// it sleeps (poke and run pair up as in Dekker's algorithm).
	hasWork  atomic.Bool
	sleeping atomic.Bool
}

// newLoop makes a loop whose epoll watches lnfd (EPOLLEXCLUSIVE: one loop is
// woken per incoming connection) and its own eventfd.
func newLoop(e *Engine, lnfd int) (*loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	evfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		_ = unix.Close(epfd)
		return nil, err
	}
	l := &loop{e: e, epfd: epfd, evfd: evfd, buf: make([]byte, 64<<10), ended: make(chan struct{})}
	l.running.Store(-1)
	l.dv = directrun.Vars{State: &l.dstate, AtTick: &l.dstateTick, Listed: &l.watchState}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, evfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(evfd), Pad: tagWake}); err != nil {
		l.closeFDs()
		return nil, err
	}
	if err := l.watchListener(lnfd); err != nil {
		l.closeFDs()
		return nil, err
	}
	return l, nil
}

// watchListener adds the listening socket to the loop's epoll: EPOLLEXCLUSIVE
// (Linux 4.5) wakes one loop per connection; without it every loop wakes and
// all but one find nothing to accept.
func (l *loop) watchListener(lnfd int) error {
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLEXCLUSIVE, Fd: int32(lnfd), Pad: tagListener}
	err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, lnfd, &ev)
	if err == unix.EINVAL {
		ev.Events = unix.EPOLLIN
		err = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, lnfd, &ev)
	}
	return err
}

// closeFDs closes the epoll instance and the eventfd (under mu, so that no
// wake-up writes to a closed or reused descriptor).
func (l *loop) closeFDs() {
	l.mu.Lock()
	l.dead = true
	_ = unix.Close(l.evfd)
	l.mu.Unlock()
	_ = unix.Close(l.epfd)
}

// poke makes the loop look at its queue and the engine's state soon, waking
// it when it sleeps (any goroutine).
func (l *loop) poke() {
	l.hasWork.Store(true)
	if l.sleeping.Load() && l.sleeping.CompareAndSwap(true, false) {
		l.mu.Lock()
		if !l.dead {
			_, _ = unix.Write(l.evfd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		}
		l.mu.Unlock()
	}
}

// add queues c for a wake-up on the loop (any goroutine).
func (l *loop) add(c *conn) {
	l.mu.Lock()
	l.ready = append(l.ready, c)
	l.mu.Unlock()
	l.poke()
}

// run is the loop's goroutine (until a direct run moves the loop to another).
func (l *loop) run() {
	l.own.claim()
	l.now = time.Now().UnixNano()
	l.nextDue = l.now + int64(tick)
	l.serve()
}

// serve runs the loop on the calling goroutine, from the batches in progress,
// until the loop stops or a direct run moves it to another goroutine.
func (l *loop) serve() {
	e := l.e
	for {
		for l.evNext < l.evN {
			ev := &l.events[l.evNext]
			l.evNext++
			switch ev.Pad {
			case tagConn:
				if fd := int(ev.Fd); fd < len(l.conns) {
					if c := l.conns[fd]; c != nil {
						l.directOK = true
						c.onEvent(ev.Events)
						l.directOK = false
						if l.direct != nil && !l.runDirect() {
							return // moved: this goroutine is a worker's now
						}
					}
				}
			case tagListener:
				l.accept()
			case tagWake:
				_, _ = unix.Read(l.evfd, l.wakeBuf[:])
			}
			l.yieldSometimes()
		}
		if !l.serveWakeups() {
			return
		}
		if e.stopping.Load() {
			break
		}
		if e.draining.Load() && !l.drained {
			l.drain()
		}
		if l.now >= l.nextDue {
			if l.lnOff {
				if fd := int(e.lnfd.Load()); fd >= 0 && l.watchListener(fd) == nil {
					l.lnOff = false
				}
			}
			l.scan()
			l.nextDue = l.now + int64(tick)
		}
		if !l.poll() {
			break
		}
	}
	l.stop()
}

// poll waits for the next batch of events (events[:evN]); false when
// epoll_wait failed and the loop must stop.
func (l *loop) poll() bool {
	wait := int((l.nextDue - l.now) / int64(time.Millisecond))
	if wait < 0 {
		wait = 0
	}
	n := pollNow(l.epfd, l.events[:])
	if n == 0 && !l.hasWork.Load() {
		runtime.Gosched() // before sleeping: workers waiting for this P run first
		l.sleeping.Store(true)
		if l.hasWork.Load() {
			l.sleeping.Store(false) // queued meanwhile: no sleep
		} else {
			var err error
			n, err = unix.EpollWait(l.epfd, l.events[:], wait+1)
			l.sleeping.Store(false)
			if err != nil && err != unix.EINTR {
				l.e.cfg.Logger.Error("epoll: epoll_wait failed; the loop stops", "err", err)
				return false
			}
			n = max(n, 0)
		}
	}
	l.now = time.Now().UnixNano()
	l.evNext, l.evN = 0, n
	return true
}

// yieldSometimes yields the loop's goroutine every 128 events, so that a loop
// that never blocks lets goroutines waiting for its P run (handlers on
// workers when GOMAXPROCS is 1), and sysmon has no cause to preempt it in
// the middle of a system call (the gnet engine does the same).
func (l *loop) yieldSometimes() {
	l.calls++
	if l.calls%128 == 0 {
		runtime.Gosched()
	}
}

// accept takes the connections waiting on the listener.
func (l *loop) accept() {
	e := l.e
	for range 64 {
		lnfd := int(e.lnfd.Load())
		if lnfd < 0 {
			return
		}
		fd, sa, err := unix.Accept4(lnfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			switch err {
			case unix.EINTR, unix.ECONNABORTED:
				continue
			case unix.EMFILE, unix.ENFILE:
				// The connection stays in the backlog and the listener
				// readable: stop watching it until the next deadline scan
				// rather than spin on it.
				if unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, lnfd, nil) == nil {
					l.lnOff = true
				}
				if !l.warnedFD {
					l.warnedFD = true
					e.cfg.Logger.Warn("epoll: accept: out of descriptors; accepting again in 100 ms", "err", err)
				}
			}
			return
		}
		if e.draining.Load() || e.stopping.Load() {
			_ = unix.Close(fd) // accepted as the listener closed
			continue
		}
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		e.open.Add(1)
		target := e.loops[int(e.next.Add(1))%len(e.loops)]
		if target == l {
			l.register(fd, sockaddrTCP(sa))
		} else {
			target.adopt(fd, sa)
		}
	}
}

// adopt hands an accepted descriptor and its peer to l.
func (l *loop) adopt(fd int, sa unix.Sockaddr) {
	l.mu.Lock()
	if l.dead {
		l.mu.Unlock()
		_ = unix.Close(fd)
		l.e.open.Add(-1)
		return
	}
	l.incoming = append(l.incoming, accepted{fd: fd, peer: sockaddrTCP(sa)})
	l.mu.Unlock()
	l.poke()
}

// accepted is a connection accepted by one loop for another.
type accepted struct {
	fd   int
	peer *net.TCPAddr
}

// serveWakeups serves what other goroutines queued: the list in progress
// (woke), else the queue if anything was queued. It reports false when a direct
// run moved the loop to another goroutine.
func (l *loop) serveWakeups() bool {
	if l.wakeNext >= len(l.woke) {
		if !l.hasWork.Load() || !l.hasWork.Swap(false) {
			return true
		}
		l.mu.Lock()
		list, fds := l.ready, l.incoming
		l.ready, l.spare = l.spare[:0], nil
		l.incoming = nil
		l.mu.Unlock()
		for _, a := range fds {
			l.register(a.fd, a.peer)
		}
		l.woke, l.wakeNext = list, 0
	}
	for l.wakeNext < len(l.woke) {
		c := l.woke[l.wakeNext]
		l.woke[l.wakeNext] = nil
		l.wakeNext++
		if !c.done && c.woken.Load() {
			l.directOK = true
			c.onWake()
			l.directOK = false
			if l.direct != nil && !l.runDirect() {
				return false
			}
		}
	}
	list := l.woke
	l.woke, l.wakeNext = nil, 0
	l.mu.Lock()
	if cap(list) <= 4096 {
		l.spare = list[:0]
	}
	l.mu.Unlock()
	return true
}

// register adds an accepted connection to the loop.
func (l *loop) register(fd int, peer *net.TCPAddr) {
	if l.e.stopping.Load() {
		_ = unix.Close(fd)
		l.e.open.Add(-1)
		return
	}
	c := newConn(l, fd, peer)
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(fd), Pad: tagConn}); err != nil {
		_ = unix.Close(fd)
		l.e.open.Add(-1)
		return
	}
	c.interest = unix.EPOLLIN | unix.EPOLLRDHUP
	for fd >= len(l.conns) {
		l.conns = append(l.conns, make([]*conn, max(len(l.conns), 64))...)
	}
	l.conns[fd] = c
	if l.e.draining.Load() {
		// Accepted before the drain closed the listener, registered after the
		// loop drained its connections: it is told now (with nothing read
		// yet, it closes).
		c.core.AskDrain()
		c.onWake()
	}
}

// scan closes the connections past their deadline.
func (l *loop) scan() {
	for _, c := range l.conns {
		if c != nil && c.deadline != 0 && l.now > c.deadline {
			c.close(errTimeout)
		}
	}
}

// drain asks every connection of the loop to finish.
func (l *loop) drain() {
	l.drained = true
	for _, c := range l.conns {
		if c != nil {
			c.core.AskDrain()
			c.onWake()
		}
	}
}

// stop closes every connection (ErrStopped) and the loop's descriptors.
func (l *loop) stop() {
	for _, c := range l.conns {
		if c != nil {
			c.close(ErrStopped)
		}
	}
	l.closeFDs()
	l.mu.Lock()
	fds := l.incoming
	l.incoming = nil
	l.mu.Unlock()
	for _, a := range fds {
		_ = unix.Close(a.fd)
		l.e.open.Add(-1)
	}
	close(l.ended)
}

// getInput returns an empty input buffer (loop only).
func (l *loop) getInput(need int) []byte {
	if n := len(l.freeIn); n > 0 {
		b := l.freeIn[n-1]
		l.freeIn[n-1] = nil
		l.freeIn = l.freeIn[:n-1]
		if cap(b) >= need {
			return b
		}
	}
	return make([]byte, 0, max(need, 4<<10))
}

// putInput keeps b for reuse: at most 4 buffers of at most 1 MiB (loop only).
func (l *loop) putInput(b []byte) {
	if len(l.freeIn) < 4 && cap(b) <= 1<<20 {
		l.freeIn = append(l.freeIn, b[:0])
	}
}
