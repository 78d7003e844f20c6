package epoll

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/celeris-dev/celeris/internal/conncore"
	"github.com/celeris-dev/celeris/internal/directrun"
	"github.com/celeris-dev/celeris/internal/protoselect"
)

// ErrStopped is the error a protocol's OnClose gets when the engine stops under it.
var ErrStopped = errors.New("epoll: stopped")

// errTimeout closes a connection past its deadline.
var errTimeout = errors.New("epoll: deadline passed")

// Config configures an Engine.
type Config struct {
	Addr string // host:port, when Listener is nil
	// Listener, when set, is an open listening TCP socket served instead of
	// listening on Addr (socket activation, a listener inherited from the
	// process that upgraded to this one). The engine owns it from New on: it
	// serves a duplicate of its descriptor, closes the file once it has that
	// duplicate, and closes the duplicate when it drains or stops.
	Listener  *os.File
	Loops     int  // event loops, default runtime.GOMAXPROCS(0)
	ReusePort bool // SO_REUSEPORT on the listening socket (another process may bind the port too)

	// Protocols choose and build each connection's protocol (internal/protoselect).
	Protocols protoselect.Protocols

	// The per-connection settings, defaults as conncore.Settings says.
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	Logger            *slog.Logger
	// MaxBufferedInput: past it a connection's reading pauses until the
	// protocol consumed half of it.
	MaxBufferedInput int
	// PeekWindow must exceed the largest request head or frame a protocol
	// needs whole.
	PeekWindow int
	// Direct: the engine runs handlers in place (httpmsg.DirectRunner) when a
	// protocol asks; otherwise RunDirect refuses and handlers go to workers.
	// A handler in place holds its loop until it returns or moves (the watch:
	// one to two directrun.Periods); the protocols send the handlers seen to
	// wait to workers (httpmsg.Request.InPlace; celeris.Config.HandlersOnWorkers
	// turns runs in place off).
	Direct bool
}

// tick is how often each loop looks for connections past their deadline.
const tick = 100 * time.Millisecond

// Engine serves connections from epoll event loops.
type Engine struct {
	cfg Config
	to  conncore.Timeouts

	addr     atomic.Pointer[net.TCPAddr]
	lnfd     atomic.Int32 // the listening socket; -1 once closed
	lnMu     sync.Mutex   // serializes closing the listener
	loops    []*loop
	next     atomic.Uint32 // round-robin of accepted connections
	open     atomic.Int64  // open connections
	draining atomic.Bool
	stopping atomic.Bool
	watch    directrun.Watcher // the direct-run watch (direct_linux.go)

	booted   chan struct{}
	bootOnce sync.Once
	bootErr  error
	stopped  chan struct{} // closed when Run returned
}

// New returns an engine; Run starts it.
func New(cfg Config) *Engine {
	if cfg.Loops <= 0 {
		cfg.Loops = runtime.GOMAXPROCS(0)
	}
	s := conncore.Settings{ReadHeaderTimeout: cfg.ReadHeaderTimeout, IdleTimeout: cfg.IdleTimeout,
		Logger: cfg.Logger, MaxBufferedInput: cfg.MaxBufferedInput, PeekWindow: cfg.PeekWindow}.WithDefaults()
	cfg.ReadHeaderTimeout, cfg.IdleTimeout, cfg.Logger = s.ReadHeaderTimeout, s.IdleTimeout, s.Logger
	cfg.MaxBufferedInput, cfg.PeekWindow = s.MaxBufferedInput, s.PeekWindow
	e := &Engine{
		cfg:     cfg,
		to:      s.Timeouts(),
		booted:  make(chan struct{}),
		stopped: make(chan struct{}),
	}
	e.lnfd.Store(-1)
	return e
}

// Run listens (or takes Config.Listener), starts the loops and serves until
// Stop.
func (e *Engine) Run() error {
	defer close(e.stopped)
	fd, err := e.listen()
	if err == nil {
		err = e.startLoops(fd)
	}
	if err != nil {
		if fd >= 0 {
			_ = unix.Close(fd)
		}
		e.markBooted(err)
		return err
	}
	e.markBooted(nil)
	for _, l := range e.loops {
		go l.run()
	}
	for _, l := range e.loops {
		<-l.ended // closed by the loop's goroutine of the moment (direct runs move loops)
	}
	e.closeListener()
	return nil
}

// markBooted ends WaitReady, with err when Run failed before serving.
func (e *Engine) markBooted(err error) {
	e.bootOnce.Do(func() {
		e.bootErr = err
		close(e.booted)
	})
}

// listen returns the listening socket, non-blocking: Config.Listener's
// duplicate, or a new one on Config.Addr (SO_REUSEADDR as net.Listen sets
// it, SO_REUSEPORT when asked).
func (e *Engine) listen() (int, error) {
	if f := e.cfg.Listener; f != nil {
		fd, err := dupListener(f)
		_ = f.Close()
		if err != nil {
			return -1, fmt.Errorf("epoll: listener: %w", err)
		}
		return fd, e.recordAddr(fd)
	}
	lc := net.ListenConfig{}
	if e.cfg.ReusePort {
		lc.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			})
			if err != nil {
				return err
			}
			return serr
		}
	}
	ln, err := lc.Listen(context.Background(), "tcp", e.cfg.Addr)
	if err != nil {
		return -1, err
	}
	f, err := ln.(*net.TCPListener).File()
	_ = ln.Close()
	if err != nil {
		return -1, err
	}
	fd, err := dupListener(f)
	_ = f.Close()
	if err != nil {
		return -1, err
	}
	return fd, e.recordAddr(fd)
}

// dupListener duplicates f's descriptor (close-on-exec, non-blocking).
func dupListener(f *os.File) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) {
		fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, derr
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// recordAddr stores the bound address of fd.
func (e *Engine) recordAddr(fd int) error {
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	a := sockaddrTCP(sa)
	if a == nil {
		return errors.New("epoll: the listener is not a TCP socket")
	}
	e.addr.Store(a)
	return nil
}

// sockaddrTCP converts an IPv4 or IPv6 socket address; nil for any other.
func sockaddrTCP(sa unix.Sockaddr) *net.TCPAddr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	}
	return nil
}

// startLoops makes the loops, each watching the listener.
func (e *Engine) startLoops(lnfd int) error {
	e.lnfd.Store(int32(lnfd))
	for i := 0; i < e.cfg.Loops; i++ {
		l, err := newLoop(e, lnfd)
		if err != nil {
			for _, l := range e.loops {
				l.closeFDs()
			}
			e.loops = nil
			e.lnfd.Store(-1)
			return err
		}
		e.loops = append(e.loops, l)
	}
	return nil
}

// closeListener closes the listening socket once: new connections are
// refused from then on (a graceful unlisten). The socket is first removed
// from every loop's epoll: epoll drops a registration only when the last
// descriptor of the socket closes, and another may still be open (systemd
// holds a socket it activated; after an upgrade the new process holds its
// copy), so a closed but registered listener would wake the loops, level-
// triggered, for every connection queued in its backlog.
func (e *Engine) closeListener() {
	e.lnMu.Lock()
	defer e.lnMu.Unlock()
	if fd := e.lnfd.Swap(-1); fd >= 0 {
		for _, l := range e.loops {
			l.mu.Lock()
			if !l.dead {
				_ = unix.EpollCtl(l.epfd, unix.EPOLL_CTL_DEL, int(fd), nil)
			}
			l.mu.Unlock()
		}
		_ = unix.Close(int(fd))
	}
}

// Listening reports whether the engine still holds its listening socket
// (until Drain or Stop closes it).
func (e *Engine) Listening() bool { return e.lnfd.Load() >= 0 }

// ListenerFile returns a duplicate of the listening socket (close-on-exec),
// for a process that takes over the address: the server's Upgrade passes it
// on. It fails once the engine stopped listening.
func (e *Engine) ListenerFile() (*os.File, error) {
	select {
	case <-e.booted:
	default:
		return nil, errors.New("celeris: the epoll engine does not listen yet")
	}
	e.lnMu.Lock()
	defer e.lnMu.Unlock()
	fd := e.lnfd.Load()
	if e.bootErr != nil || fd < 0 || e.draining.Load() {
		return nil, errors.New("celeris: the epoll engine no longer listens")
	}
	nfd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(nfd), "epoll-listener"), nil
}

// WaitReady blocks until the engine serves (or Run failed) and returns the
// bound address.
func (e *Engine) WaitReady() (net.Addr, error) {
	<-e.booted
	if e.bootErr != nil {
		return nil, e.bootErr
	}
	return e.addr.Load(), nil
}

// Addr is the bound address, nil before the engine is ready.
func (e *Engine) Addr() net.Addr {
	if a := e.addr.Load(); a != nil {
		return a
	}
	return nil
}

// Drain refuses new connections (the listener closes), asks every
// connection's protocol to finish (h2 GOAWAY; h1 closes when idle), and
// returns the number of connections still open.
func (e *Engine) Drain() int {
	select {
	case <-e.booted:
	default:
		return 0
	}
	if e.bootErr == nil && e.draining.CompareAndSwap(false, true) {
		e.closeListener()
		for _, l := range e.loops {
			l.poke()
		}
	}
	return int(e.open.Load())
}

// Stop stops the engine: the listener and every connection close. It returns
// once the engine stopped, or ctx's error when ctx ends first (the engine
// still stops). Stopping a stopped engine returns nil.
func (e *Engine) Stop(ctx context.Context) error {
	select {
	case <-e.booted:
	default:
		select {
		case <-e.booted:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if e.bootErr != nil {
		return e.bootErr
	}
	if e.stopping.CompareAndSwap(false, true) {
		e.closeListener()
		for _, l := range e.loops {
			l.poke()
		}
	}
	select {
	case <-e.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// OpenConnections is the number of open connections.
func (e *Engine) OpenConnections() int { return int(e.open.Load()) }
