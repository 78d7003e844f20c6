package celerish3

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/transport"
	"github.com/quic-go/quic-go"
)

// Defaults of Config.
const (
	DefaultMaxFieldSectionSize  = 64 << 10
	DefaultMaxConcurrentStreams = 100
	DefaultMaxRequestBodySize   = 4 << 20
	DefaultIdleTimeout          = 60 * time.Second
	DefaultHandshakeTimeout     = 10 * time.Second
	DefaultReadHeaderTimeout    = 10 * time.Second
	DefaultAltSvcMaxAge         = 24 * time.Hour
)

// Config configures HTTP/3. Zero values take the celeris.Server's setting
// where it has one, else the default in brackets.
type Config struct {
	// Addr is the UDP address to serve on [the TLS listener's address: the
	// same IP and port number, over UDP].
	Addr string
	// MaxFieldSectionSize bounds a request's header (and trailer) section,
	// decoded, each field counted as name + value + 32 bytes (RFC 9114
	// §4.2.2); it is sent as SETTINGS_MAX_FIELD_SECTION_SIZE, and a larger
	// section is answered 431 [Server's MaxHeaderBytes, else 64 KiB].
	MaxFieldSectionSize int
	// MaxConcurrentStreams bounds the requests a client has open at once on
	// one connection (QUIC's MAX_STREAMS; RFC 9114 §5.1) [Server's
	// MaxConcurrentStreams, else 100].
	MaxConcurrentStreams int64
	// MaxRequestBodySize bounds a request body: a larger content-length is
	// answered 413 before the handler runs; a body without one fails the
	// handler's read with ErrBodyTooLarge (413) [Server's MaxRequestBodySize].
	MaxRequestBodySize int64
	// IdleTimeout closes a connection without traffic [Server's IdleTimeout,
	// else 60s]; HandshakeTimeout bounds the QUIC handshake [Server's
	// TLSHandshakeTimeout, else 10s]; ReadHeaderTimeout bounds the wait for a
	// request stream's header section, after which the stream is reset with
	// H3_REQUEST_INCOMPLETE (a slowloris client holds nothing longer) [Server's
	// ReadHeaderTimeout, else 10s].
	IdleTimeout, HandshakeTimeout, ReadHeaderTimeout time.Duration
	// Allow0RTT accepts requests in 0-RTT data, before the handshake
	// completes. Such data can be replayed by an attacker (RFC 9001 §9.2), so
	// only safe methods (GET, HEAD, OPTIONS, TRACE) are served from it at once;
	// a request with another method waits for the handshake to complete (RFC
	// 8470 §3), which a replay never does. [false: no 0-RTT]
	Allow0RTT bool
	// AltSvcMaxAge is the ma parameter of the Alt-Svc field that advertises
	// HTTP/3 on the server's TLS responses (RFC 7838 §3.1) [24h].
	AltSvcMaxAge time.Duration
	// DisableAltSvc leaves the Alt-Svc field out.
	DisableAltSvc bool
}

// listener is quic.Listener or, with 0-RTT, quic.EarlyListener (which hands a
// connection over before its handshake completes).
type listener interface {
	Accept(ctx context.Context) (*quic.Conn, error)
	Close() error
	Addr() net.Addr
}

// Server serves HTTP/3 for a celeris.Server: created by Enable, started and
// stopped by the celeris.Server (it is its celeris.Transport).
type Server struct {
	cfg     Config
	handler transport.Handler // TransportEnv.Handler, set by Serve
	logger  *slog.Logger

	// Set by Serve before ready is closed; read only afterwards.
	maxFieldSection uint64
	extendedConnect bool // TransportEnv.ExtendedConnect
	maxBody         int64
	headerTimeout   time.Duration
	allow0RTT       bool
	addr            net.Addr
	altSvc          string
	readyErr        error
	ready           chan struct{}

	mu       sync.Mutex
	ln       listener
	tr       *quic.Transport
	conns    map[*conn]struct{}
	workers  *workers // the request streams' goroutines
	draining bool
	stopped  bool
}

var _ celeris.Transport = (*Server)(nil)

// Enable serves s's routes over HTTP/3 too: on UDP at the port of s's TLS
// listener (Config.TLSAddr with Start, or Config.Addr with StartTLS), with the
// same certificates, started by s.Start and stopped by s.Shutdown (GOAWAY,
// then a drain of the requests in flight). Every HTTP/1.1 and HTTP/2 response
// over TLS then carries Alt-Svc: h3=":PORT"; ma=86400, so that browsers move to
// HTTP/3. Call it before s starts.
func Enable(s *celeris.Server, cfg Config) *Server {
	h := newServer(nil, cfg)
	s.AddTransport(h)
	return h
}

// newServer returns a Server that serves handler, or the handler of the
// TransportEnv that Serve gets when handler is nil.
func newServer(handler transport.Handler, cfg Config) *Server {
	return &Server{cfg: cfg, handler: handler, ready: make(chan struct{}), conns: make(map[*conn]struct{}), workers: newWorkers()}
}

// Serve listens on UDP and serves HTTP/3 until Stop (celeris.Transport).
func (h *Server) Serve(env celeris.TransportEnv) error {
	if h.handler == nil {
		h.handler = env.Handler
	}
	h.extendedConnect = env.ExtendedConnect
	if h.handler == nil {
		h.readyErr = errors.New("celerish3: TransportEnv without a Handler")
		close(h.ready)
		return h.readyErr
	}
	ln, err := h.listen(env)
	if err != nil {
		h.readyErr = err
		close(h.ready)
		return err
	}
	close(h.ready)
	for {
		qc, err := ln.Accept(context.Background())
		if err != nil {
			h.mu.Lock()
			stopped := h.stopped || h.draining
			h.mu.Unlock()
			if stopped || errors.Is(err, quic.ErrServerClosed) {
				return nil
			}
			return err
		}
		c := newConn(h, qc)
		h.mu.Lock()
		if h.stopped {
			h.mu.Unlock()
			_ = qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "")
			continue
		}
		h.conns[c] = struct{}{}
		draining := h.draining
		h.mu.Unlock()
		go c.serve()
		if draining {
			c.goAway()
		}
	}
}

// listen applies the configuration and opens the UDP socket.
func (h *Server) listen(env celeris.TransportEnv) (listener, error) {
	cfg := &h.cfg
	h.logger = env.Logger
	if h.logger == nil {
		h.logger = slog.Default()
	}
	h.maxFieldSection = uint64(pick(cfg.MaxFieldSectionSize, env.MaxHeaderBytes, DefaultMaxFieldSectionSize))
	h.maxBody = pick(cfg.MaxRequestBodySize, env.MaxRequestBodySize, DefaultMaxRequestBodySize)
	h.allow0RTT = cfg.Allow0RTT
	h.headerTimeout = pick(cfg.ReadHeaderTimeout, env.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	streams := pick(cfg.MaxConcurrentStreams, int64(env.MaxConcurrentStreams), DefaultMaxConcurrentStreams)
	if env.TLSConfig == nil {
		return nil, errors.New("celerish3: HTTP/3 needs TLS")
	}
	tc := env.TLSConfig.Clone()
	tc.NextProtos = []string{"h3"}   // RFC 9114 §3.1
	tc.MinVersion = tls.VersionTLS13 // RFC 9001 §4.2: QUIC uses TLS 1.3
	addr := cfg.Addr
	if addr == "" {
		ta, ok := env.TLSAddr.(*net.TCPAddr)
		if !ok {
			return nil, errors.New("celerish3: no UDP address: set Config.Addr")
		}
		addr = net.JoinHostPort(ta.IP.String(), strconv.Itoa(ta.Port))
	}
	var udp net.PacketConn
	if env.PacketConn != nil {
		udp = env.PacketConn // inherited (socket activation, the server's Upgrade)
	} else {
		ua, err := net.ResolveUDPAddr("udp", addr)
		if err != nil {
			return nil, err
		}
		if udp, err = net.ListenUDP("udp", ua); err != nil {
			return nil, err
		}
	}
	tr := &quic.Transport{Conn: udp}
	qcfg := &quic.Config{
		HandshakeIdleTimeout: pick(cfg.HandshakeTimeout, env.HandshakeTimeout, DefaultHandshakeTimeout),
		MaxIdleTimeout:       pick(cfg.IdleTimeout, env.IdleTimeout, DefaultIdleTimeout),
		MaxIncomingStreams:   streams,
		// The client's control and QPACK streams, and a few reserved ones.
		MaxIncomingUniStreams: 16,
		Allow0RTT:             cfg.Allow0RTT,
	}
	var (
		ln  listener
		err error
	)
	if cfg.Allow0RTT {
		ln, err = tr.ListenEarly(tc, qcfg)
	} else {
		ln, err = tr.Listen(tc, qcfg)
	}
	if err != nil {
		_ = udp.Close()
		return nil, err
	}
	h.mu.Lock()
	stopped := h.stopped
	h.ln, h.tr = ln, tr
	h.mu.Unlock()
	if stopped { // Stop came first (another engine failed to start)
		_ = ln.Close()
		_ = tr.Close()
		_ = udp.Close()
		return nil, errors.New("celerish3: stopped before it listened")
	}
	h.addr = ln.Addr()
	if !cfg.DisableAltSvc {
		ma := cfg.AltSvcMaxAge
		if ma <= 0 {
			ma = DefaultAltSvcMaxAge
		}
		port := h.addr.(*net.UDPAddr).Port
		h.altSvc = `h3=":` + strconv.Itoa(port) + `"; ma=` + strconv.FormatInt(int64(ma/time.Second), 10)
	}
	return ln, nil
}

// pick returns the first positive value.
func pick[T int | int64 | time.Duration](v ...T) T {
	for _, x := range v {
		if x > 0 {
			return x
		}
	}
	return 0
}

// WaitReady blocks until the server listens and returns its UDP address.
func (h *Server) WaitReady() (net.Addr, error) {
	<-h.ready
	return h.addr, h.readyErr
}

// AltSvc is the Alt-Svc field value advertising the server, "" when
// Config.DisableAltSvc is set.
func (h *Server) AltSvc() string {
	<-h.ready
	return h.altSvc
}

// Drain stops accepting connections and sends GOAWAY on every open one (RFC
// 9114 §5.2); each closes once its requests are answered. It returns the
// number of connections still open.
func (h *Server) Drain() int {
	h.mu.Lock()
	if !h.draining {
		h.draining = true
		if h.ln != nil {
			_ = h.ln.Close()
		}
		for c := range h.conns {
			c.goAway()
		}
	}
	n := len(h.conns)
	h.mu.Unlock()
	return n
}

// Stop closes every connection (H3_NO_ERROR) and the UDP socket.
func (h *Server) Stop(ctx context.Context) error {
	h.mu.Lock()
	h.stopped = true
	if h.ln != nil {
		_ = h.ln.Close()
	}
	conns := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	tr := h.tr
	h.mu.Unlock()
	h.workers.stop()
	for _, c := range conns {
		_ = c.qc.CloseWithError(quic.ApplicationErrorCode(ErrCodeNoError), "server stopped")
	}
	for _, c := range conns {
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if tr != nil {
		_ = tr.Close()
		_ = tr.Conn.Close()
	}
	return nil
}

// OpenConnections is the number of HTTP/3 connections open now.
func (h *Server) OpenConnections() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)
}

// forget removes a closed connection.
func (h *Server) forget(c *conn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
}

var _ celeris.PacketTransport = (*Server)(nil)

// PacketConn is the UDP socket the server reads, nil before it listens
// (celeris.PacketTransport): the celeris.Server's Upgrade passes it on to the
// new process.
func (h *Server) PacketConn() net.PacketConn {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tr == nil || h.stopped {
		return nil
	}
	return h.tr.Conn
}
