//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package celeris

import "github.com/celeris-dev/celeris/internal/protoselect"

// gnetAvailable: gnet's event loops do not run on this OS (Windows): every
// listener uses the std engine.
const gnetAvailable = false

// checkGnet is never asked where gnet is not built.
var checkGnet = func() error { return nil }

func (s *Server) newGnetEngine(string, protoselect.Protocols) servingEngine {
	panic("celeris: gnet is not available on this OS")
}
