package celerisgrpc

// Graceful shutdown on the native path.
//
// When the Celeris server serving an RPC begins Shutdown (Context.ShuttingDown is
// closed), its HTTP/2 connections have sent GOAWAY: clients open no new streams
// there and reconnect elsewhere for new RPCs, while the streams already open go on,
// as under grpc-go's GracefulStop. Unary RPCs run to their end. A streaming RPC
// may never end by itself (a health Watch, a subscription), so it is given
// Options' StreamShutdownGrace (default 0) to end by itself; then its context is
// cancelled (a RecvMsg blocked on the client returns too) and, when the handler
// returns an error, the client gets codes.Unavailable, the status grpc-go's clients
// retry on another connection, as after grpc-go's Stop. Shutdown then completes
// instead of waiting for its deadline.
//
// One goroutine per Celeris server waits for its ShuttingDown channel (see
// shutdownContext); a streaming RPC adds a context.AfterFunc on it, not a
// goroutine.

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// StreamShutdownGrace sets how long a streaming RPC served natively may still run
// once the Celeris server serving it begins Shutdown: after d its context is
// cancelled and a handler that then fails ends the RPC with codes.Unavailable
// ("grpc: the server is shutting down"). Unary RPCs always run to their end.
// Default 0: streams end as shutdown begins, so that a health Watch or another
// stream that never ends by itself does not hold Shutdown to its deadline. A
// negative d never cancels them (grpc-go's GracefulStop: Shutdown's context then
// bounds them). It does not apply under net/http (ServeHTTP).
func StreamShutdownGrace(d time.Duration) Option {
	return func(o *options) { o.streamGrace = d }
}

// errShuttingDown is the cause of a stream's context cancelled by shutdown.
var errShuttingDown = errors.New("celerisgrpc: the server is shutting down")

// shutdownStatus is what the client gets from a stream that shutdown ended.
var shutdownStatus = status.New(codes.Unavailable, "grpc: the server is shutting down")

// shutdownContext returns a context that is done once stopping is closed (a
// Celeris server's ShuttingDown channel). One goroutine per channel waits for it;
// the entry is dropped when it fires, so a stopped server leaves nothing behind
// (a later RPC on it gets a fresh context, done at once).
func (s *Server) shutdownContext(stopping <-chan struct{}) context.Context {
	s.stopMu.Lock()
	defer s.stopMu.Unlock()
	if ctx, ok := s.stops[stopping]; ok {
		return ctx
	}
	ctx, cancel := context.WithCancel(context.Background())
	if s.stops == nil {
		s.stops = make(map[<-chan struct{}]context.Context)
	}
	s.stops[stopping] = ctx
	go func() {
		<-stopping
		cancel()
		s.stopMu.Lock()
		delete(s.stops, stopping)
		s.stopMu.Unlock()
	}()
	return ctx
}

// endOnShutdown makes ctx end, with cause errShuttingDown, StreamShutdownGrace
// after stopping closes. The returned function releases the watch (call it when
// the RPC ends).
func (s *Server) endOnShutdown(ctx context.Context, stopping <-chan struct{}) (context.Context, func()) {
	grace := s.opts.streamGrace
	if stopping == nil || grace < 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	var timer atomic.Pointer[time.Timer]
	stop := context.AfterFunc(s.shutdownContext(stopping), func() {
		if grace == 0 {
			cancel(errShuttingDown)
			return
		}
		timer.Store(time.AfterFunc(grace, func() { cancel(errShuttingDown) }))
	})
	return ctx, func() {
		if !stop() {
			if t := timer.Load(); t != nil {
				t.Stop()
			}
		}
		cancel(nil)
	}
}

// endedByShutdown reports whether ctx was cancelled by endOnShutdown.
func endedByShutdown(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errShuttingDown)
}
