package celeris

import "sync/atomic"

// Stats is a snapshot of server counters, for metrics.
type Stats struct {
	OpenConnections int   // connections open now (HTTP/1.x and HTTP/2, plaintext and TLS)
	ActiveStreams   int64 // HTTP/2 streams open now
	ActiveRequests  int64 // requests being served: handlers running now, and the requests pipelined behind them in one worker's batch
	// TLSHandshakeErrors counts the TLS handshakes that failed since start (a
	// client sent no ClientHello, or garbage, timed out, or shared no version,
	// cipher suite or ALPN protocol with the server). They are not logged.
	TLSHandshakeErrors int64
}

// Stats returns current counters. It is safe to call from any goroutine.
func (s *Server) Stats() Stats {
	st := Stats{
		ActiveStreams:      s.activeStreams.Load(),
		ActiveRequests:     s.activeRequests.Load(),
		TLSHandshakeErrors: s.tlsHandshakeErrors.Load(),
	}
	s.mu.Lock()
	engs := s.engines()
	s.mu.Unlock()
	for _, eng := range engs {
		st.OpenConnections += eng.OpenConnections()
	}
	return st
}

type counters struct {
	activeStreams  atomic.Int64
	activeRequests atomic.Int64

	tlsHandshakeErrors atomic.Int64
}
