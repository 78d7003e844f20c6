package celeris

import (
	"github.com/celeris-dev/celeris/internal/h1"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// NewH1ConnForTest serves s's routes over an HTTP/1.1 connection on nc, without
// network, for the external tests and benchmarks of this package.
func NewH1ConnForTest(s *Server, nc httpmsg.Conn) *h1.Conn {
	s.freeze()
	return h1.NewConn(nc, &s.h1cfg)
}
