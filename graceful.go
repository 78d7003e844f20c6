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

// StartGraceful serves until SIGINT or SIGTERM, then shuts down gracefully:
// the readiness check fails for Config.ShutdownDelay (see ReadyHandler), new
// connections are refused, in-flight requests get up to timeout to finish. On
// SIGHUP (Unix) it upgrades: it starts the program again with its listening
// sockets (Upgrade) and, once the new process serves, drains and returns nil;
// when the new process fails, it logs the error and goes on serving. It
// returns nil after a clean shutdown (so do not log.Fatal its result
// unconditionally), context.DeadlineExceeded when requests were still running
// at the timeout, or the error that stopped the server:
//
//	if err := s.StartGraceful(15 * time.Second); err != nil {
//		log.Fatal(err)
//	}
func (s *Server) StartGraceful(timeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	hup := make(chan os.Signal, 1)
	if inheritSupported {
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	upgraded := make(chan error, 1)
	upgrading := false
wait:
	for {
		select {
		case err := <-errc:
			if errors.Is(err, http.ErrServerClosed) {
				return nil
			}
			return err
		case <-ctx.Done():
			break wait
		case <-hup:
			if upgrading {
				s.logger.Warn("celeris: SIGHUP ignored: an upgrade is in progress")
				continue
			}
			upgrading = true
			go func() { upgraded <- s.Upgrade() }()
		case err := <-upgraded:
			upgrading = false
			if err == nil {
				break wait // the new process serves: drain this one
			}
		}
	}
	stop() // a second signal now ends the process the default way
	s.logger.Info("celeris: shutting down", "timeout", timeout)
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	serr := s.Shutdown(sctx)
	if upgrading {
		<-upgraded // Shutdown cancelled it: the new process is stopped and reaped
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return serr
}

// ShuttingDown returns a channel that is closed when Shutdown begins (for
// StartGraceful: when the signal arrives). Graceful shutdown waits for in-flight
// requests; a stream that would never end by itself (Server-Sent Events, a long
// poll) should watch this channel as well as the request's context and return,
// so that shutdown completes at once instead of at its timeout:
//
//	for {
//		select {
//		case <-c.Context().Done(): // the client went away
//			return nil
//		case <-c.ShuttingDown(): // the server is stopping: the client reconnects later
//			return nil
//		case ev := <-updates:
//			if err := sse.Send(ev); err != nil {
//				return err
//			}
//		}
//	}
//
// The request's context is not cancelled when shutdown begins (requests that
// end by themselves, such as downloads, are allowed to finish), only when its
// deadline passes.
func (s *Server) ShuttingDown() <-chan struct{} { return s.stopping }

// ShuttingDown is the server's ShuttingDown channel: closed when graceful
// shutdown begins. See Server.ShuttingDown.
func (c *Context) ShuttingDown() <-chan struct{} { return c.server.stopping }
