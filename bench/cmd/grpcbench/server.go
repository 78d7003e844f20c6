package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"google.golang.org/grpc"
	grpcinterop "google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/celeris-dev/celeris"
	celerisgrpc "github.com/celeris-dev/celeris/grpc"
)

// serverNames are the servers the driver runs by default.
var serverNames = []string{"celeris-native", "celeris", "grpc", "nethttp"}

// extraServers are variants the driver knows but runs only when named:
// celeris-cancelctx is celeris with the request's context wrapped in
// context.WithCancel before grpc-go sees it (see cancelCtx).
var extraServers = []string{"celeris-cancelctx"}

// cancelCtx hands h a request whose context is a *context.cancelCtx child of
// the original. grpc-go's ServeHTTP transport calls context.WithCancel on a
// value-wrapped r.Context(); when no *cancelCtx is on the chain and the direct
// parent does not implement AfterFunc, the context package starts a goroutine
// per call to propagate cancellation. net/http's request contexts are
// cancelCtxs; this wrapper measures what that goroutine costs under Celeris.
func cancelCtx(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// newGRPCServer is grpc-go's interop test service on a default grpc.Server.
func newGRPCServer() *grpc.Server {
	gs := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(gs, grpcinterop.NewTestServer())
	return gs
}

// startServer starts server kind on addr and returns its address and a stop
// function. Every kind serves the same grpc.Server configuration.
func startServer(kind, addr string) (string, func(), error) {
	gs := newGRPCServer()
	switch kind {
	case "celeris", "celeris-cancelctx", "celeris-native":
		s := celeris.New(celeris.Config{Addr: addr, EventLoops: runtime.GOMAXPROCS(0)})
		var h http.Handler = gs
		switch kind {
		case "celeris-cancelctx":
			h = cancelCtx(gs)
		case "celeris-native":
			// The same service on celerisgrpc: Adapt takes its native path.
			ns := celerisgrpc.NewServer()
			testgrpc.RegisterTestServiceServer(ns, grpcinterop.NewTestServer())
			h = ns
		}
		// Routes run on worker goroutines by default: gRPC handlers block.
		s.POST("/*rpc", celeris.Adapt(h))
		errc := make(chan error, 1)
		go func() { errc <- s.Start() }()
		select {
		case <-s.Ready():
		case err := <-errc:
			return "", nil, fmt.Errorf("celeris: %w", err)
		}
		stop := func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = s.Shutdown(ctx)
		}
		return s.Addr().String(), stop, nil
	case "grpc":
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return "", nil, err
		}
		go func() { _ = gs.Serve(ln) }()
		return ln.Addr().String(), gs.Stop, nil
	case "nethttp":
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return "", nil, err
		}
		var protos http.Protocols
		protos.SetHTTP1(true)
		protos.SetUnencryptedHTTP2(true)
		srv := &http.Server{Handler: gs, Protocols: &protos}
		go func() { _ = srv.Serve(ln) }()
		return ln.Addr().String(), func() { _ = srv.Close() }, nil
	}
	return "", nil, fmt.Errorf("unknown server %q (want celeris-native, celeris, grpc, nethttp or celeris-cancelctx)", kind)
}

// serve is server mode: it prints "listening ADDR" and serves until SIGTERM or
// SIGINT, then stops the CPU profile (if any) and exits.
func serve(kind, addr, cpuprofile, memprofile string) error {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	if cpuprofile != "" {
		f, err := os.Create(cpuprofile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return errors.Join(err, f.Close())
		}
		defer func() {
			pprof.StopCPUProfile()
			_ = f.Close()
		}()
	}
	got, stop, err := startServer(kind, addr)
	if err != nil {
		return err
	}
	fmt.Printf("listening %s\n", got)
	<-sig
	stop()
	if memprofile != "" {
		f, err := os.Create(memprofile)
		if err != nil {
			return err
		}
		return errors.Join(pprof.Lookup("allocs").WriteTo(f, 0), f.Close())
	}
	return nil
}
