//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

// Package engine is the only importer of gnet. It runs the event loops, keeps each
// connection's state in gnet's Conn.Context(), and flushes each connection's output
// batch once per loop iteration. The per-connection rules (protocol choice and
// switch, deadlines, close, end of input, lingering, drain, hijack) are a
// conncore.Core's; this package does gnet's I/O and works around what gnet lacks
// (pause.go, detach.go, drainwatch.go, unlisten_linux.go).
//
// Life of a read (all on the connection's event loop):
//
//	gnet OnTraffic(c)
//	  -> conn.onTraffic: Core.Wake (OnWake) first when a handler goroutine asked
//	     for it, then the buffered input, at most PeekWindow bytes at a time ->
//	     Core.Feed -> Proto.OnData(bytes)
//	     -> consumed bytes dropped; what is left moves to the engine's input buffer
//	  -> one gnet Write of the output batch the protocol appended to
//	  -> Close when the Core is closing (gnet flushes before closing)
//
// Bytes the protocol did not consume are kept in the engine's input buffer
// (input.go), never in gnet's, and presented again, followed by new bytes, on the
// next call. Nothing keeps a view into those buffers after OnTraffic returns:
// protocols copy what they keep.
//
// Timeouts: each connection publishes an atomic deadline after every callback
// (Core.Deadline: read header timeout while a partial request is buffered, idle
// timeout when nothing is in progress, none while a handler runs). A ticker
// goroutine closes connections whose deadline passed, through gnet's thread-safe
// Close.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	errorx "github.com/panjf2000/gnet/v2/pkg/errors"
	"github.com/panjf2000/gnet/v2/pkg/socket"
	"golang.org/x/sys/unix"

	"github.com/celeris-dev/celeris/internal/conncore"
	"github.com/celeris-dev/celeris/internal/protoselect"
)

// ErrStopped is the error a protocol's OnClose gets when the engine stops under it.
var ErrStopped = errors.New("engine: stopped")

// Config configures an Engine.
type Config struct {
	Addr              string // host:port
	EventLoops        int    // 0: runtime.NumCPU()
	ReusePort         bool
	ReadHeaderTimeout time.Duration // default 10 s
	IdleTimeout       time.Duration // default 60 s
	Logger            *slog.Logger

	// Protocols choose and build each connection's protocol (internal/protoselect).
	Protocols protoselect.Protocols
	// MaxBufferedInput bounds the bytes received but not yet consumed by the
	// protocol (a pipelined flood while a handler runs, an upload faster than its
	// handler reads); past it the engine stops reading the socket until the protocol
	// caught up. Default 512 KiB.
	MaxBufferedInput int

	// PeekWindow is the most buffered input presented to the protocol in one
	// OnData call; it must exceed the largest request head or frame the protocol
	// needs whole. Default 128 KiB.
	PeekWindow int
}

// Engine serves connections with gnet.
type Engine struct {
	gnet.BuiltinEventEngine
	cfg  Config
	to   conncore.Timeouts // cfg's deadlines, for each connection's Core
	eng  gnet.Engine
	addr atomic.Pointer[net.TCPAddr]

	booted   chan struct{} // closed once every loop and listener runs (first OnTick), or Run failed
	bootOnce sync.Once
	bootErr  error
	stopped  chan struct{}
	draining atomic.Bool

	lnMu     sync.Mutex // serializes unlisten with gnet's shutdown (unlisten_linux.go)
	lnClosed bool       // guarded by lnMu: gnet shuts down (OnShutdown) and closes the listeners

	now atomic.Int64 // coarse clock, unix nanoseconds, refreshed by the ticker

	// loops holds each event loop's state (gnet.EventLoop -> *loopState): its
	// wake-up queue and its open connections. Connections are kept per loop,
	// each set under its loop's lock, so that the ticker's walk over one loop's
	// connections never holds up opens and closes on the others.
	loops sync.Map
}

// New returns an engine; Run starts it.
func New(cfg Config) *Engine {
	if cfg.EventLoops <= 0 {
		cfg.EventLoops = runtime.NumCPU()
	}
	s := conncore.Settings{ReadHeaderTimeout: cfg.ReadHeaderTimeout, IdleTimeout: cfg.IdleTimeout,
		Logger: cfg.Logger, MaxBufferedInput: cfg.MaxBufferedInput, PeekWindow: cfg.PeekWindow}.WithDefaults()
	cfg.ReadHeaderTimeout, cfg.IdleTimeout, cfg.Logger = s.ReadHeaderTimeout, s.IdleTimeout, s.Logger
	cfg.MaxBufferedInput, cfg.PeekWindow = s.MaxBufferedInput, s.PeekWindow
	e := &Engine{cfg: cfg, booted: make(chan struct{}), stopped: make(chan struct{}),
		to: s.Timeouts()}
	e.now.Store(time.Now().UnixNano())
	return e
}

// Run serves until Stop. It returns once the engine has stopped, or at once with
// CheckLayout's error when gnet is not laid out as the engine expects.
func (e *Engine) Run() error {
	defer close(e.stopped)
	if err := checkLayout(); err != nil {
		// Never serve without the defences that need gnet's internals.
		e.markBooted(err)
		return err
	}
	addr := e.cfg.Addr
	if e.cfg.ReusePort && e.cfg.EventLoops > 1 {
		// gnet binds each loop's listener to the address as given: with port 0
		// each would get a port of its own and only the first is reported.
		a, release, err := reservePort(addr)
		if err != nil {
			e.markBooted(err)
			return err
		}
		defer release()
		addr = a
	}
	err := gnet.Run(e, "tcp://"+addr,
		gnet.WithNumEventLoop(e.cfg.EventLoops),
		gnet.WithReusePort(e.cfg.ReusePort),
		// As Go's net.Listen does: a restart must not fail while connections
		// this server closed first are still in TIME_WAIT on the port.
		gnet.WithReuseAddr(true),
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithTicker(true),
		gnet.WithReadBufferCap(64<<10),
		gnet.WithLogger(gnetLogger{e.cfg.Logger}),
	)
	e.markBooted(err) // no-op when the engine ran
	return err
}

// markBooted ends WaitReady, with err when Run failed before the engine ran.
func (e *Engine) markBooted(err error) {
	e.bootOnce.Do(func() {
		e.bootErr = err
		close(e.booted)
	})
}

// reservePort resolves port 0 of addr for SO_REUSEPORT listeners: it binds a
// socket with SO_REUSEPORT (without listening, so it never takes a connection) and
// keeps it until release, so that the port stays this process's while gnet binds
// every loop's listener to it. The socket is made the way gnet makes its listeners
// (same resolution, family and IPV6_V6ONLY), so the port is checked free for what
// they bind. Addresses with a port are returned as they are.
func reservePort(addr string) (string, func(), error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port != "0" {
		return addr, func() {}, nil
	}
	sa, family, _, v6only, err := socket.GetTCPSockAddr("tcp", addr)
	if err != nil {
		return addr, func() {}, nil // gnet reports it
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM, 0)
	if err != nil {
		return "", nil, fmt.Errorf("engine: reserve port for %s: %w", addr, err)
	}
	unix.CloseOnExec(fd)
	release := func() { _ = unix.Close(fd) }
	if family == unix.AF_INET6 {
		err = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, boolInt(v6only))
	}
	if err == nil {
		err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	}
	if err == nil {
		err = unix.Bind(fd, sa)
	}
	var bound unix.Sockaddr
	if err == nil {
		bound, err = unix.Getsockname(fd)
	}
	a := tcpAddr(bound)
	if err != nil || a == nil {
		release()
		return "", nil, fmt.Errorf("engine: reserve port for %s: %v", addr, err)
	}
	return net.JoinHostPort(host, strconv.Itoa(a.Port)), release, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// WaitReady blocks until every event loop and listener runs (or Run failed) and
// returns the bound address.
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

// OnBoot records the bound address (port 0 picks a free one).
func (e *Engine) OnBoot(eng gnet.Engine) gnet.Action {
	e.eng = eng
	if fd, err := eng.Dup(); err == nil {
		if sa, err := unix.Getsockname(fd); err == nil {
			if a := tcpAddr(sa); a != nil {
				e.addr.Store(a)
			}
		}
		_ = unix.Close(fd)
	}
	// Ready waits for the first OnTick: gnet creates the other loops (and, with
	// ReusePort, their listeners) after OnBoot, and starts the ticker after them.
	return gnet.None
}

// OnShutdown runs before gnet closes its listeners, whether Stop asked or a loop
// failed: no unlisten may touch their descriptors from then on.
func (e *Engine) OnShutdown(gnet.Engine) {
	e.lnMu.Lock()
	e.lnClosed = true
	e.lnMu.Unlock()
}

// tcpAddr converts an IPv4 or IPv6 socket address; nil for any other.
func tcpAddr(sa unix.Sockaddr) *net.TCPAddr {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]).To16(), Port: a.Port}
	case *unix.SockaddrInet6:
		return &net.TCPAddr{IP: net.IP(a.Addr[:]), Port: a.Port}
	}
	return nil
}

// OnOpen attaches the per-connection state.
func (e *Engine) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	if e.draining.Load() {
		return nil, gnet.Close
	}
	c := &conn{gc: gc, eng: e, remote: gc.RemoteAddr()}
	c.core = *conncore.New(c, &e.cfg.Protocols, e.to) // held by value: one allocation per connection
	c.deadline.Store(e.now.Load() + int64(e.cfg.ReadHeaderTimeout))
	gc.SetContext(c)
	c.loop = e.loopOf(gc.EventLoop())
	c.loop.keep(c)
	return nil, gnet.None
}

// OnClose releases the connection's protocol state.
func (e *Engine) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, _ := gc.Context().(*conn)
	if c == nil {
		return gnet.None
	}
	// gnet removes the fd from its poller after OnClose; a paused fd must be there.
	c.resumeRead()
	c.stopDrainWatch()
	if c.detach(err) {
		return gnet.None // the input ended with answers owed or output unsent (detach.go)
	}
	c.closed.Store(true)
	c.releaseInput()
	c.core.Closed(err)
	c.loop.forget(c)
	return gnet.None
}

// OnTraffic runs the connection's protocol over what arrived.
func (e *Engine) OnTraffic(gc gnet.Conn) gnet.Action {
	c := gc.Context().(*conn)
	c.loop.yieldSometimes()
	c.readEvent()
	return c.onTraffic()
}

// OnTick refreshes the coarse clock and closes connections past their deadline.
func (e *Engine) OnTick() (time.Duration, gnet.Action) {
	now := time.Now().UnixNano()
	e.now.Store(now)
	e.markBooted(nil)
	e.eachLoop(func(ls *loopState) {
		ls.connMu.Lock()
		defer ls.connMu.Unlock()
		for c := range ls.conns {
			if c.det.Load() != nil {
				continue // detached from gnet; its writer has a deadline
			}
			// CompareAndSwap: the loop may have published a new deadline meanwhile.
			if d := c.deadline.Load(); d != 0 && now > d && c.deadline.CompareAndSwap(d, 0) {
				_ = c.gc.Close()
				continue
			}
			if c.pendingOut.Load() {
				// gnet signals nothing when its output drains: poll, so a protocol
				// holding data back (HTTP/2 flow of a slow reader) resumes.
				c.Wake()
			}
		}
	})
	return tickerPeriod, gnet.None
}

// Stop stops the engine: the listener and every connection close. It returns
// once the engine stopped, or when ctx ends first (ctx's error; the engine
// still stops, Run returns then). A ctx that already ended still starts the
// stop. Stopping a stopped engine waits for it and returns nil.
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
	// gnet's Stop starts the shutdown, then polls every 500 ms until it is
	// done: with a cancelled context it only starts it, and Run's return
	// (stopped) says when it is done, at once.
	trigger, cancel := context.WithCancel(context.Background())
	cancel()
	err := e.eng.Stop(trigger)
	select {
	case <-e.stopped:
	case <-ctx.Done():
		e.abortDetached(false)
		return ctx.Err()
	}
	e.abortDetached(true)
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, errorx.ErrEngineInShutdown) {
		return fmt.Errorf("engine: stop: %w", err)
	}
	return nil
}

// abortDetached closes the connections detached from gnet (detach.go): their
// writers return at once. When the loops are gone (stopped), the protocols that
// were still serving are closed here, since no loop will do it.
func (e *Engine) abortDetached(stopped bool) {
	e.eachLoop(func(ls *loopState) {
		ls.connMu.Lock()
		defer ls.connMu.Unlock()
		for c := range ls.conns {
			d := c.det.Load()
			if d == nil {
				continue
			}
			d.abort()
			if stopped && !c.closed.Load() {
				c.closed.Store(true)
				c.core.Closed(ErrStopped)
			}
			delete(ls.conns, c)
		}
	})
}

// Drain makes the engine refuse new connections, asks every connection's protocol
// to finish (h2 GOAWAY; h1 closes when idle) and returns the number of connections
// still open. The first call closes the listeners (unlisten); a connection accepted
// before that is closed as it opens.
func (e *Engine) Drain() int {
	if e.draining.CompareAndSwap(false, true) {
		e.unlisten()
	}
	n := 0
	e.eachLoop(func(ls *loopState) {
		ls.connMu.Lock()
		defer ls.connMu.Unlock()
		for c := range ls.conns {
			c.requestDrain()
		}
		n += len(ls.conns)
	})
	return n
}

// OpenConnections is the number of open connections.
func (e *Engine) OpenConnections() int {
	n := 0
	e.eachLoop(func(ls *loopState) {
		ls.connMu.Lock()
		n += len(ls.conns)
		ls.connMu.Unlock()
	})
	return n
}

// loopOf returns el's state, made on el's first connection.
func (e *Engine) loopOf(el gnet.EventLoop) *loopState {
	if v, ok := e.loops.Load(el); ok {
		return v.(*loopState)
	}
	v, _ := e.loops.LoadOrStore(el, &loopState{el: el, conns: make(map[*conn]struct{})})
	return v.(*loopState)
}

// eachLoop calls f for every event loop that has had a connection.
func (e *Engine) eachLoop(f func(ls *loopState)) {
	e.loops.Range(func(_, v any) bool {
		f(v.(*loopState))
		return true
	})
}
