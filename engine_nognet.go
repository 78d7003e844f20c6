//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package celeris

// gnetAvailable: gnet's event loops do not run on this OS (Windows): every
// listener uses the std engine.
const gnetAvailable = false

func (s *Server) newGnetEngine(string, protocols) servingEngine {
	panic("celeris: gnet is not available on this OS")
}
