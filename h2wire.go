package celeris

import (
	"github.com/celeris-dev/celeris/internal/engine"
	"github.com/celeris-dev/celeris/internal/h2"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// outboundReporter is implemented by the engine's connection: bytes written but not
// yet accepted by the socket (event loop only).
type outboundReporter interface {
	OutboundBuffered() int
}

// configureH2 wires HTTP/2 into the engine: prior knowledge (preface) and the
// HTTP/1.1 Upgrade: h2c path. With Config.DisableH2C neither is offered.
func (s *Server) configureH2(ecfg *engine.Config) {
	if s.cfg.DisableH2C {
		return
	}
	s.h2cfg = h2.Config{
		MaxConcurrentStreams: s.cfg.MaxConcurrentStreams,
		MaxHeaderListSize:    uint32(max(0, s.cfg.MaxHeaderBytes)),
		MaxRequestBodySize:   s.cfg.MaxRequestBodySize,
		StreamGauge:          &s.activeStreams,
		Logger:               s.logger,
	}
	if s.cfg.RefusalHeader != nil {
		s.h2cfg.RefusalFields = s.refusalFields
	}
	if s.cfg.RefusalBody != nil {
		s.h2cfg.RefusalBody = s.refusalBody
	}
	s.h1cfg.EnableH2C = true
	ecfg.NewH2 = func(c httpmsg.Conn) httpmsg.Proto {
		p := h2.NewConn(c, s, s.pool, &s.h2cfg)
		if ob, ok := c.(outboundReporter); ok {
			p.SetOutboundBuffered(ob.OutboundBuffered)
		}
		return p
	}
	ecfg.Upgrade = func(c httpmsg.Conn, req *httpmsg.Request, settings []byte) (httpmsg.Proto, error) {
		p, err := h2.NewUpgradedConn(c, s, s.pool, &s.h2cfg, settings, req)
		if err != nil {
			return nil, err
		}
		if ob, ok := c.(outboundReporter); ok {
			p.SetOutboundBuffered(ob.OutboundBuffered)
		}
		return p, nil
	}
}
