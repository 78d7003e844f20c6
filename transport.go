package celeris

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/transport"
)

// Transport serves the Server's routes on a listener of its own, beside the
// server's engines, and is started and stopped with the Server: HTTP/3 over QUIC
// (the module github.com/celeris-dev/celeris/http3) is one. It reaches the same
// router, middleware and Context as HTTP/1.1 and HTTP/2. Register it with
// AddTransport before Start.
//
// The Server calls Serve once its TLS listener listens, then WaitReady; on
// Shutdown it calls Drain until it reports no open connection (or the
// Shutdown's context ends), then Stop.
type Transport interface {
	// Serve listens and serves until Stop; it returns nil after Stop, or the
	// listen or serve error.
	Serve(env TransportEnv) error
	// WaitReady blocks until the transport listens, or failed to.
	WaitReady() (net.Addr, error)
	// AltSvc is the Alt-Svc field value (RFC 7838 §3) that advertises the
	// transport on the server's TLS responses, "" for none. Called once after
	// WaitReady succeeded.
	AltSvc() string
	// Drain stops taking new requests (HTTP/3: GOAWAY), lets running ones
	// finish, and returns how many connections are still open. It may be
	// called many times.
	Drain() int
	// Stop closes every connection left; ctx bounds the wait.
	Stop(ctx context.Context) error
	// OpenConnections is the number of connections open now (Stats).
	OpenConnections() int
}

// TransportEnv is what a Transport gets from its Server at start: the TLS
// configuration and address of the server's TLS listener and the server's
// limits, which the transport applies as HTTP/1.1 and HTTP/2 do.
type TransportEnv struct {
	// TLSConfig is a clone of the TLS listener's configuration (certificates,
	// client authentication); the transport sets its own NextProtos on it.
	TLSConfig *tls.Config
	// TLSAddr is the address the TLS listener listens on (its port is the
	// default port of a transport that serves the same origin).
	TLSAddr net.Addr
	// PacketConn, when set, is a UDP socket the process inherited for the
	// transport (socket activation's "h3", or a parent's Upgrade): the
	// transport serves on it instead of opening one, and closes it at Stop.
	PacketConn net.PacketConn

	MaxHeaderBytes       int           // Config.MaxHeaderBytes [0: the transport's default]
	MaxRequestBodySize   int64         // Config.MaxRequestBodySize
	MaxConcurrentStreams uint32        // Config.MaxConcurrentStreams [0: the transport's default]
	IdleTimeout          time.Duration // Config.IdleTimeout [0: the transport's default]
	ReadHeaderTimeout    time.Duration // Config.ReadHeaderTimeout [0: the transport's default]
	HandshakeTimeout     time.Duration // Config.TLSHandshakeTimeout [0: the transport's default]
	Logger               *slog.Logger

	// Handler serves the requests the transport reads through the server's
	// router, middleware and Context (package transport: Prepare, then Serve).
	Handler transport.Handler
	// ExtendedConnect reports whether the server serves extended CONNECT
	// (RFC 8441, RFC 9220): it has a tunnel route (Route.ExtendedConnect) and
	// Config.DisableExtendedConnect is not set. An HTTP/3 transport then sends
	// SETTINGS_ENABLE_CONNECT_PROTOCOL, as HTTP/2 does.
	ExtendedConnect bool
}

// AddTransport registers t to be started by Start (or StartTLS) and stopped by
// Shutdown with the server's engines. t needs TLS: Config.TLSAddr with Start, or
// StartTLS. It panics when the server has started.
func (s *Server) AddTransport(t Transport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		panic("celeris: AddTransport after Start")
	}
	s.transports = append(s.transports, t)
}

// transportEngine runs a Transport as one of the server's engines.
type transportEngine struct {
	s   *Server
	t   Transport
	tls servingEngine // the TLS engine whose address and configuration t shares
	tc  *tls.Config
	pc  net.PacketConn // an inherited UDP socket, or nil
}

// Run waits for the TLS listener, then serves the transport.
func (e *transportEngine) Run() error {
	addr, err := e.tls.WaitReady()
	if err != nil {
		return nil // the TLS engine's own Run reports it
	}
	cfg := &e.s.cfg
	return e.t.Serve(TransportEnv{
		TLSConfig:            e.tc.Clone(),
		TLSAddr:              addr,
		PacketConn:           e.pc,
		MaxHeaderBytes:       cfg.MaxHeaderBytes,
		MaxRequestBodySize:   cfg.MaxRequestBodySize,
		MaxConcurrentStreams: cfg.MaxConcurrentStreams,
		IdleTimeout:          cfg.IdleTimeout,
		ReadHeaderTimeout:    cfg.ReadHeaderTimeout,
		HandshakeTimeout:     cfg.TLSHandshakeTimeout,
		Logger:               e.s.logger,
		Handler:              e.s.handler(),
		ExtendedConnect:      e.s.extendedConnect(),
	})
}

// WaitReady waits for the transport and then publishes its Alt-Svc value,
// unless Config.AltSvc set one.
func (e *transportEngine) WaitReady() (net.Addr, error) {
	if _, err := e.tls.WaitReady(); err != nil {
		return nil, err // Run never served the transport
	}
	addr, err := e.t.WaitReady()
	if err == nil && e.s.cfg.AltSvc == "" {
		if v := e.t.AltSvc(); v != "" {
			e.s.altSvc.CompareAndSwap(nil, &v)
		}
	}
	return addr, err
}

func (e *transportEngine) Addr() net.Addr {
	addr, _ := e.t.WaitReady()
	return addr
}
func (e *transportEngine) Drain() int                     { return e.t.Drain() }
func (e *transportEngine) Stop(ctx context.Context) error { return e.t.Stop(ctx) }
func (e *transportEngine) OpenConnections() int           { return e.t.OpenConnections() }

// newTransportEngines wraps the registered transports (s.mu held, after
// newEngines): each shares the TLS engine and its configuration tc.
func (s *Server) newTransportEngines(tc *tls.Config) error {
	if len(s.transports) == 0 {
		return nil
	}
	tlsEng := s.tlsEng
	if tlsEng == nil && tc != nil {
		tlsEng = s.eng // StartTLS: Config.Addr is the TLS listener
	}
	if tlsEng == nil || tc == nil {
		return errors.New("celeris: a transport (HTTP/3) needs TLS: set Config.TLSAddr, or use StartTLS")
	}
	s.transportEngs = s.transportEngs[:0]
	for i, t := range s.transports {
		e := &transportEngine{s: s, t: t, tls: tlsEng, tc: tc}
		if i == 0 {
			e.pc = s.inherit.packet // the first transport serves the TLS port's UDP (activation.go)
		}
		s.transportEngs = append(s.transportEngs, e)
	}
	return nil
}

// addAltSvc adds the Alt-Svc field to the response of a request that came over
// TLS on HTTP/1.1 or HTTP/2 (RFC 7838 §3), when a transport or Config.AltSvc
// advertises an alternative service.
func (s *Server) addAltSvc(c *Context) {
	if v := s.altSvc.Load(); v != nil && c.req.ProtoMajor < 3 {
		c.header = append(c.header, httpmsg.Field{Name: "Alt-Svc", Value: *v})
	}
}
