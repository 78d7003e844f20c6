package celeris

import (
	"github.com/celeris-dev/celeris/internal/h2"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// configureH2 sets HTTP/2 up: over TLS it is chosen by ALPN; in cleartext by prior
// knowledge (preface) or the HTTP/1.1 Upgrade: h2c path, neither of which is
// offered with Config.DisableH2C.
func (s *Server) configureH2() {
	s.h2cfg = h2.Config{
		MaxConcurrentStreams: s.cfg.MaxConcurrentStreams,
		MaxHeaderListSize:    uint32(max(0, s.cfg.MaxHeaderBytes)),
		MaxRequestBodySize:   s.cfg.MaxRequestBodySize,
		// The client's preface, its SETTINGS included, is its first request
		// head: it is due within the read-header timeout.
		SettingsTimeout: s.cfg.ReadHeaderTimeout,
		StreamGauge:     &s.activeStreams,
		// RFC 8441: WebSocket over HTTP/2, advertised only when a route can
		// serve it (xconnect.go).
		EnableConnectProtocol: s.extendedConnect(),
		Logger:                s.logger,
		InPlace:               !s.cfg.HandlersOnWorkers,
	}
	if s.cfg.RefusalHeader != nil {
		s.h2cfg.RefusalFields = s.refusalFields
	}
	if s.cfg.RefusalBody != nil {
		s.h2cfg.RefusalBody = s.refusalBody
	}
	// Over TLS, HTTP/1.1 never switches to h2c (RFC 9113 §3.2: h2 is negotiated
	// by ALPN there).
	s.h1tls = s.h1cfg
	s.h1tls.EnableH2C = false
	s.h1cfg.EnableH2C = !s.cfg.DisableH2C
}

// newH2 builds the HTTP/2 state of a connection (prior knowledge or ALPN h2).
func (s *Server) newH2(c httpmsg.Conn) httpmsg.Proto {
	return h2.NewConn(c, s.handler(), s.pool, &s.h2cfg)
}

// upgradeH2 builds the HTTP/2 state of an HTTP/1.1 connection that asked for h2c.
func (s *Server) upgradeH2(c httpmsg.Conn, req *httpmsg.Request, settings []byte) (httpmsg.Proto, error) {
	p, err := h2.NewUpgradedConn(c, s.handler(), s.pool, &s.h2cfg, settings, req)
	if err != nil {
		return nil, err
	}
	return p, nil
}
