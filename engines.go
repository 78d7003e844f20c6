package celeris

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"

	"github.com/celeris-dev/celeris/internal/h1"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/protoselect"
	"github.com/celeris-dev/celeris/internal/stdengine"
)

// Engine names the engine that carries a listener's connections (Config.Engine).
type Engine string

const (
	// EngineAuto is EngineEpoll on Linux and EngineStd elsewhere.
	EngineAuto Engine = ""
	// EngineGnet serves connections from gnet event loops, on Linux, the BSDs and
	// macOS (not Windows). It reaches into gnet v2.10.0's unexported state for
	// read pausing, half-close and graceful unlisten: with another gnet built in,
	// Start fails (engine.CheckLayout).
	EngineGnet Engine = "gnet"
	// EngineStd serves connections with the standard library's net package, one
	// goroutine per connection (two while it has output queued), on every OS. TLS
	// listeners always use it.
	EngineStd Engine = "std"
	// EngineEpoll serves connections from Celeris's own epoll event loops
	// (internal/epoll), on Linux only, and is the default there: one loop per
	// core (Config.EventLoops) sharing the listening socket, owning its sockets
	// outright (read pausing, half-close, graceful unlisten and hijack need no
	// reach into another library). Per server CPU-second it is level with gnet
	// or ahead (docs/ARCHITECTURE.md, "The epoll engine"). It also serves a
	// listener handed to StartListener (a *net.TCPListener).
	EngineEpoll Engine = "epoll"
)

// servingEngine is what the server needs of an engine (internal/engine for gnet,
// internal/stdengine for the standard library).
type servingEngine interface {
	Run() error
	WaitReady() (net.Addr, error)
	Addr() net.Addr
	Drain() int
	Stop(ctx context.Context) error
	OpenConnections() int
}

// plainProtocols serve a cleartext listener: HTTP/1.1, and h2c unless disabled.
func (s *Server) plainProtocols() protoselect.Protocols {
	p := protoselect.Protocols{
		NewH1:    func(c httpmsg.Conn) httpmsg.Proto { return h1.NewConn(c, &s.h1cfg) },
		RefuseH2: s.refuseH2,
	}
	if !s.cfg.DisableH2C {
		p.NewH2, p.Upgrade = s.newH2, s.upgradeH2
	}
	return p
}

// tlsProtocols serve a TLS listener: chosen by ALPN, HTTP/1.1 without h2c.
func (s *Server) tlsProtocols() protoselect.Protocols {
	return protoselect.Protocols{
		NewH1: func(c httpmsg.Conn) httpmsg.Proto { return h1.NewConn(c, &s.h1tls) },
		NewH2: s.newH2,
	}
}

// peekWindow: a whole request head (up to MaxHeaderBytes) must fit in one window.
func (s *Server) peekWindow() int {
	return max(s.cfg.MaxHeaderBytes, h1.DefaultMaxHeaderBytes) + 64<<10
}

// newEngines builds the engine of Config.Addr (plaintext, or TLS for StartTLS)
// and the TLS engine of Config.TLSAddr (s.mu held).
func (s *Server) newEngines(certFile, keyFile string, tlsOnly bool) error {
	if tlsOnly && s.cfg.TLSAddr != "" {
		return errors.New("celeris: StartTLS serves Config.Addr; Config.TLSAddr is for Start")
	}
	if !tlsOnly {
		kind := s.cfg.Engine
		ln := s.listener
		if ln == nil {
			ln = s.inherit.plain // an inherited socket (activation.go), or nil
		}
		if ln != nil && s.listener == nil && kind == EngineAuto {
			// An inherited TCP socket goes to the default engine, epoll, which
			// adopts a TCP listener (gnet listens by address only).
			if _, tcp := ln.(*net.TCPListener); tcp && epollAvailable {
				kind = EngineEpoll
			}
		}
		if ln != nil && !(kind == EngineEpoll && epollAvailable) {
			// StartListener, an inherited socket: the std engine adopts any
			// listener; the epoll engine a TCP one, when Config.Engine names it
			// (or, for an inherited socket, by default).
			kind = EngineStd
		}
		if kind == EngineAuto {
			kind = EngineStd
			if epollAvailable {
				kind = EngineEpoll
			}
		}
		switch kind {
		case EngineGnet:
			if !gnetAvailable {
				return fmt.Errorf("celeris: the gnet engine is not available on %s", runtime.GOOS)
			}
			if err := checkGnet(); err != nil {
				return err
			}
			s.eng = s.newGnetEngine(s.cfg.Addr, s.plainProtocols())
		case EngineStd:
			s.eng = s.newStdEngine(s.cfg.Addr, s.plainProtocols(), nil)
		case EngineEpoll:
			if !epollAvailable {
				return fmt.Errorf("celeris: the epoll engine is not available on %s", runtime.GOOS)
			}
			// A handler in place holds a loop many connections share: its
			// route learns whether it waits (Config.HandlersOnWorkers).
			s.h1cfg.LearnInPlace = !s.cfg.HandlersOnWorkers
			eng, err := s.newEpollEngine(s.cfg.Addr, s.plainProtocols(), ln)
			if err != nil {
				return err
			}
			s.eng = eng
		default:
			return fmt.Errorf("celeris: unknown engine %q", kind)
		}
	}
	if !tlsOnly && s.cfg.TLSAddr == "" {
		return s.newTransportEngines(nil)
	}
	tc, err := s.tlsConfig(certFile, keyFile)
	if err != nil {
		return err
	}
	p := s.tlsProtocols()
	if tlsOnly {
		s.eng = s.newStdEngine(s.cfg.Addr, p, tc)
	} else {
		s.tlsEng = s.newStdEngine(s.cfg.TLSAddr, p, tc)
	}
	return s.newTransportEngines(tc)
}

// newStdEngine builds a std engine on addr; tc nil means plaintext.
func (s *Server) newStdEngine(addr string, p protoselect.Protocols, tc *tls.Config) servingEngine {
	var ln net.Listener
	switch {
	case tc == nil && addr == s.cfg.Addr && s.listener != nil:
		ln = s.listener // StartListener's, for the plaintext engine
	case tc == nil && addr == s.cfg.Addr:
		ln = s.inherit.plain // an inherited socket (activation.go), or nil
	case tc != nil:
		ln = s.inherit.tls
	}
	return stdengine.New(stdengine.Config{
		Addr:              addr,
		Listener:          ln,
		ReusePort:         s.cfg.ReusePort,
		TLSConfig:         tc,
		HandshakeTimeout:  s.cfg.TLSHandshakeTimeout,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		Logger:            s.logger,
		Protocols:         p,
		HandshakeFailed:   func() { s.tlsHandshakeErrors.Add(1) },
		PeekWindow:        s.peekWindow(),
	})
}
