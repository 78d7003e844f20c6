//go:build !linux

package celeris

import (
	"net"

	"github.com/celeris-dev/celeris/internal/protoselect"
)

// epollAvailable: the epoll engine runs on Linux only.
const epollAvailable = false

func (s *Server) newEpollEngine(string, protoselect.Protocols, net.Listener) (servingEngine, error) {
	panic("celeris: the epoll engine is not available on this OS")
}
