//go:build unix

package websocket_test

import (
	"errors"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
)

// TestStartGracefulWebSockets: StartGraceful(3*time.Second) with WebSockets open
// returns nil soon after SIGTERM, once the clients answered the close frames.
func TestStartGracefulWebSockets(t *testing.T) {
	gracefulWebSockets(t, func(s *celeris.Server) (start func() error, stop func() error) {
		errc := make(chan error, 1)
		start = func() error {
			go func() { errc <- s.StartGraceful(3 * time.Second) }()
			return nil
		}
		stop = func() error {
			if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
				return err
			}
			select {
			case err := <-errc:
				return err
			case <-time.After(5 * time.Second):
				return errors.New("StartGraceful still running 5 s after SIGTERM")
			}
		}
		return start, stop
	})
}
