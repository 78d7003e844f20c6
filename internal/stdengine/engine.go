// Package stdengine is the second engine behind the httpmsg seam: it serves
// connections with the standard library (net.Listener, crypto/tls), one owner
// goroutine per connection, on every OS Go supports. It carries TLS, and plaintext
// where gnet is not available or not wanted; it drives the same internal/h1 and
// internal/h2 state machines as the gnet engine (internal/engine), through the same
// contract (httpmsg.Conn, httpmsg.Proto and the optional interfaces of
// internal/httpmsg's contract.go), and applies the same per-connection rules:
// each connection drives an internal/conncore.Core (protocol choice and switch,
// deadlines, end of input, lingering close, drain, hijack, the output bound's
// level), and this package does the I/O around it.
//
// Life of a connection:
//
//	accept -> (TLS: handshake under Config.HandshakeTimeout; the core chooses by ALPN)
//	owner goroutine (conn.serve), the equivalent of the event loop for this conn:
//	  loop: Core.Wake when a worker asked -> Core.Feed over the unconsumed input
//	        -> the callback's output batch: written at once, without blocking, as
//	           far as the socket takes it while nothing is queued (conn.send),
//	           the rest queued for the writer (TLS: encrypted into records that
//	           tlsIO collects and emits as one batch before the owner would block)
//	        -> Core.FlushedLevel(unsent) -> wait: Core.Deadline, a blocking Read
//	           into the connection's buffer, interrupted by Wake (read deadline
//	           in the past)
//	writer goroutine (only while output is queued): writes the queued batches in
//	order, in slices each under the idle timeout as write deadline, and wakes the
//	owner when the unsent output falls to the level the protocol waits for.
//
// Why a read deadline for the wake-up: the owner must run OnWake promptly while it
// is blocked in Read (a worker finished a response; shutdown asked for a drain).
// Setting the read deadline to a time in the past makes the pending Read return at
// once with a timeout; both net.TCPConn and tls.Conn stay usable after that
// (crypto/tls keeps a partial record and treats a timeout as temporary; net/http's
// own abortPendingRead relies on the same). It keeps one goroutine reading and
// running the protocol, so the protocol's state has one owner as on gnet, with no
// second reader goroutine and no hand-off of read buffers. Wake-ups coalesce on an
// atomic flag, so a busy connection pays for one deadline change per wake, not per
// response. The writer is a goroutine of its own so that the owner never blocks in
// a write (the owner's own writes are non-blocking): it keeps reading (WINDOW_UPDATE, RST_STREAM, a client that leaves) and
// draining workers while a slow client takes its output, and the writer's queue is
// the "output still held" that gnet's buffer is for the protocols' back-pressure.
package stdengine

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/celeris-dev/celeris/internal/conncore"
	"github.com/celeris-dev/celeris/internal/protoselect"
)

// ErrStopped is the error a protocol's OnClose gets when the engine stops under it.
var ErrStopped = errors.New("stdengine: stopped")

// Config configures an Engine.
type Config struct {
	Addr string // host:port
	// Listener, when set, is served instead of listening on Addr (a listener
	// the application opened: systemd socket activation, tests). The engine
	// closes it when it stops.
	Listener  net.Listener
	ReusePort bool // SO_REUSEPORT on the listener (not on Windows)
	// TLSConfig, when set, makes every connection TLS: the handshake runs first,
	// and then the protocol is chosen by ALPN (internal/protoselect). The config
	// must not be modified after Run.
	TLSConfig        *tls.Config
	HandshakeTimeout time.Duration // TLS handshake, default 10 s

	ReadHeaderTimeout time.Duration // default 10 s
	IdleTimeout       time.Duration // default 60 s
	Logger            *slog.Logger

	// Protocols choose and build each connection's protocol (internal/protoselect).
	Protocols protoselect.Protocols
	// HandshakeFailed, when set, is called for every failed TLS handshake (which
	// is not logged: any client can cause one per connection).
	HandshakeFailed func()

	MaxBufferedInput int // unconsumed input past which reading stops, default 512 KiB
	PeekWindow       int // most input presented per OnData call, default 128 KiB
}

// Engine serves connections on a net.Listener.
type Engine struct {
	cfg  Config
	to   conncore.Timeouts // cfg's
	addr atomic.Pointer[net.Addr]

	booted   chan struct{}
	bootOnce sync.Once
	bootErr  error
	stopping chan struct{} // closed by Stop
	stopOnce sync.Once
	stopped  chan struct{} // closed when Run returned
	draining atomic.Bool

	mu    sync.Mutex
	ln    net.Listener       // guarded by mu
	conns map[*conn]struct{} // guarded by mu: every open connection
	wg    sync.WaitGroup     // owner goroutines

	// bigPool holds read buffers of MaxBufferedInput bytes, for connections
	// whose input backs up past the pooled bufSize (conn.makeRoom).
	bigPool sync.Pool

	watch watcher // the direct-run watch (direct.go)
}

// New returns an engine; Run starts it.
func New(cfg Config) *Engine {
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = 10 * time.Second
	}
	s := conncore.Settings{ReadHeaderTimeout: cfg.ReadHeaderTimeout, IdleTimeout: cfg.IdleTimeout,
		Logger: cfg.Logger, MaxBufferedInput: cfg.MaxBufferedInput, PeekWindow: cfg.PeekWindow}.WithDefaults()
	cfg.ReadHeaderTimeout, cfg.IdleTimeout, cfg.Logger = s.ReadHeaderTimeout, s.IdleTimeout, s.Logger
	cfg.MaxBufferedInput, cfg.PeekWindow = s.MaxBufferedInput, s.PeekWindow
	return &Engine{
		cfg:      cfg,
		to:       s.Timeouts(),
		booted:   make(chan struct{}),
		stopping: make(chan struct{}),
		stopped:  make(chan struct{}),
		conns:    make(map[*conn]struct{}),
	}
}

// Run listens and serves until Stop; it returns the listen error, or nil once the
// engine stopped and every connection closed.
func (e *Engine) Run() error {
	defer close(e.stopped)
	ln, err := e.listen()
	if err != nil {
		e.markBooted(err)
		return err
	}
	a := ln.Addr()
	e.addr.Store(&a)
	e.mu.Lock()
	e.ln = ln
	e.mu.Unlock()
	e.markBooted(nil)
	err = e.accept(ln)
	if err != nil {
		e.stopOnce.Do(func() { close(e.stopping) })
	}
	<-e.stopping
	e.closeAll()
	e.wg.Wait()
	return err
}

func (e *Engine) markBooted(err error) {
	e.bootOnce.Do(func() {
		e.bootErr = err
		close(e.booted)
	})
}

// accept runs until the listener closes (nil) or fails (the error).
func (e *Engine) accept(ln net.Listener) error {
	var delay time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				// Out of descriptors, or a connection reset before accept: back
				// off as net/http does instead of spinning.
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				e.cfg.Logger.Warn("stdengine: accept", "err", err, "retry_in", delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		if e.draining.Load() {
			_ = nc.Close()
			continue
		}
		c := newConn(e, nc)
		e.mu.Lock()
		select {
		case <-e.stopping:
			e.mu.Unlock()
			_ = nc.Close()
			continue
		default:
		}
		e.conns[c] = struct{}{}
		e.wg.Add(1)
		e.mu.Unlock()
		go c.serve()
	}
}

// temporary is an accept error that says whether a retry may succeed (net.Error's
// deprecated Temporary, still the only way to tell EMFILE and ECONNABORTED).
type temporary interface {
	Temporary() bool
}

// isTemporary reports accept errors worth a retry (EMFILE, ECONNABORTED...).
func isTemporary(err error) bool {
	t, ok := err.(temporary)
	return ok && t.Temporary()
}

// remove forgets c (its owner goroutine ends).
func (e *Engine) remove(c *conn) {
	e.mu.Lock()
	delete(e.conns, c)
	e.mu.Unlock()
	e.wg.Done()
}

// closeAll aborts every connection: their owners close the protocols with
// ErrStopped and return.
func (e *Engine) closeAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for c := range e.conns {
		c.abort()
	}
}

// WaitReady blocks until the listener runs (or Run failed) and returns its address.
func (e *Engine) WaitReady() (net.Addr, error) {
	<-e.booted
	if e.bootErr != nil {
		return nil, e.bootErr
	}
	return e.Addr(), nil
}

// Addr is the bound address, nil before the engine is ready.
func (e *Engine) Addr() net.Addr {
	if a := e.addr.Load(); a != nil {
		return *a
	}
	return nil
}

// Drain makes the engine refuse new connections (the first call closes the
// listener), asks every connection's protocol to finish and returns the number of
// connections still open.
func (e *Engine) Drain() int {
	if e.draining.CompareAndSwap(false, true) {
		e.mu.Lock()
		if e.ln != nil {
			_ = e.ln.Close()
		}
		e.mu.Unlock()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for c := range e.conns {
		c.requestDrain()
	}
	return len(e.conns)
}

// Stop closes the listener and every connection and waits for Run to return.
func (e *Engine) Stop(ctx context.Context) error {
	select {
	case <-e.booted: // a ctx that already ended still stops a running engine
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
	e.stopOnce.Do(func() { close(e.stopping) })
	e.mu.Lock()
	_ = e.ln.Close()
	e.mu.Unlock()
	select {
	case <-e.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// OpenConnections is the number of open connections (handshakes included).
func (e *Engine) OpenConnections() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.conns)
}
