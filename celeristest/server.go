package celeristest

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
)

// Start runs s for a test over real sockets, as httptest.NewServer does for
// net/http: it starts s, waits until it serves, and shuts it down gracefully when
// the test ends (a failed shutdown fails the test). s's Config.Addr should be
// "127.0.0.1:0". It returns the address s listens on.
func Start(tb testing.TB, s *celeris.Server) string {
	tb.Helper()
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	select {
	case <-s.Ready():
	case err := <-errc:
		tb.Fatalf("celeristest: start: %v", err)
	case <-time.After(10 * time.Second):
		tb.Fatal("celeristest: the server did not start in 10 s")
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			tb.Errorf("celeristest: shutdown: %v", err)
		}
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			tb.Errorf("celeristest: Start returned %v", err)
		}
	})
	return s.Addr().String()
}

// Serve builds a server with cfg on 127.0.0.1:0 (two event loops unless cfg says
// otherwise), lets register add its routes, and Starts it.
func Serve(tb testing.TB, cfg celeris.Config, register func(s *celeris.Server)) (*celeris.Server, string) {
	tb.Helper()
	cfg.Addr = "127.0.0.1:0"
	if cfg.EventLoops == 0 {
		cfg.EventLoops = 2
	}
	s := celeris.New(cfg)
	if register != nil {
		register(s)
	}
	return s, Start(tb, s)
}
