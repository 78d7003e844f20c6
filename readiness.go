package celeris

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"
)

// Readiness
//
// A load balancer or Kubernetes sends traffic to a process while its readiness
// check passes. Config.ShutdownDelay makes Shutdown first fail that check
// (ReadyHandler answers 503) while every route is still served, for the
// delay, so that the balancer takes the process out of rotation before it
// stops accepting; then the graceful shutdown proceeds. After an Upgrade the
// delay is skipped: the new process serves the same sockets.

// readiness is the server's readiness state.
type readiness struct {
	unready atomic.Bool // Shutdown began: ReadyHandler answers 503
}

// HealthHandler answers 200 "ok" while the process serves (a liveness check:
// Kubernetes' livenessProbe), during a shutdown's delay and drain as well.
func (s *Server) HealthHandler() HandlerFunc {
	return func(c *Context) error {
		return c.String(http.StatusOK, "ok")
	}
}

// ReadyHandler answers 200 "ready" while the server takes new work, and 503
// "shutting down" once Shutdown began (during Config.ShutdownDelay, and then
// while it drains): a readiness check (Kubernetes' readinessProbe, a load
// balancer's health check).
//
//	s.GET("/healthz", s.HealthHandler())
//	s.GET("/readyz", s.ReadyHandler())
func (s *Server) ReadyHandler() HandlerFunc {
	return func(c *Context) error {
		if s.NotReady() {
			return c.String(http.StatusServiceUnavailable, "shutting down")
		}
		return c.String(http.StatusOK, "ready")
	}
}

// NotReady reports whether Shutdown began: ReadyHandler then answers 503.
func (s *Server) NotReady() bool { return s.rd.unready.Load() }

// beginShutdownDelay fails the readiness check, then waits Config.ShutdownDelay
// (or until ctx ends) while everything is served, unless this process handed
// its sockets to a new one (Upgrade).
func (s *Server) beginShutdownDelay(ctx context.Context) {
	if s.rd.unready.Swap(true) {
		return // a second Shutdown does not wait again
	}
	s.upg.mu.Lock()
	upgraded := s.upg.done
	s.upg.mu.Unlock()
	d := s.cfg.ShutdownDelay
	if d <= 0 || upgraded {
		return
	}
	select {
	case <-s.ready:
	default:
		return // not serving: nothing to keep up
	}
	s.logger.Info("celeris: not ready; accepting until the shutdown delay passes", "delay", d)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
