//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package celeris

import (
	"github.com/celeris-dev/celeris/internal/engine"
	"github.com/celeris-dev/celeris/internal/protoselect"
)

// gnetAvailable: gnet's event loops run on this OS (epoll or kqueue).
const gnetAvailable = true

// checkGnet reports whether the gnet built in is laid out as the gnet engine
// expects (engine.CheckLayout); a variable, so that tests simulate a mismatch.
var checkGnet = engine.CheckLayout

// newGnetEngine builds a gnet engine on addr.
func (s *Server) newGnetEngine(addr string, p protoselect.Protocols) servingEngine {
	return engine.New(engine.Config{
		Addr:              addr,
		EventLoops:        s.cfg.EventLoops,
		ReusePort:         s.cfg.ReusePort,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		Logger:            s.logger,
		Protocols:         p,
		PeekWindow:        s.peekWindow(),
	})
}
