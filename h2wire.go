package celeris

import "github.com/celeris-dev/celeris/internal/engine"

// configureH2 wires HTTP/2 into the engine (prior knowledge and Upgrade).
func (s *Server) configureH2(ecfg *engine.Config) {}
