package celeris

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// StartGraceful serves until SIGINT or SIGTERM, then shuts down gracefully: new
// connections are refused, in-flight requests get up to timeout to finish. It
// returns nil after a clean shutdown, or the error that stopped the server.
func (s *Server) StartGraceful(timeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	stop() // a second signal now ends the process the default way
	s.logger.Info("celeris: shutting down", "timeout", timeout)
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	serr := s.Shutdown(sctx)
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return serr
}
