package celeris

import (
	"fmt"
	"net"

	"github.com/celeris-dev/celeris/internal/epoll"
	"github.com/celeris-dev/celeris/internal/protoselect"
)

// epollAvailable: the epoll engine runs on this OS.
const epollAvailable = true

// newEpollEngine builds an epoll engine on addr, or on ln (StartListener's),
// which must then be a *net.TCPListener: the engine serves its socket, and ln
// itself is closed here (the socket stays open in the engine's hands).
func (s *Server) newEpollEngine(addr string, p protoselect.Protocols, ln net.Listener) (servingEngine, error) {
	cfg := epoll.Config{
		Addr:              addr,
		Loops:             s.cfg.EventLoops,
		ReusePort:         s.cfg.ReusePort,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		Logger:            s.logger,
		Protocols:         p,
		PeekWindow:        s.peekWindow(),
		Direct:            !s.cfg.HandlersOnWorkers,
	}
	if ln != nil {
		tl, ok := ln.(*net.TCPListener)
		if !ok {
			return nil, fmt.Errorf("celeris: the epoll engine serves a *net.TCPListener, not a %T", ln)
		}
		f, err := tl.File()
		if err != nil {
			_ = ln.Close()
			return nil, fmt.Errorf("celeris: epoll engine: %w", err)
		}
		_ = ln.Close()
		cfg.Listener = f
	}
	return epoll.New(cfg), nil
}
