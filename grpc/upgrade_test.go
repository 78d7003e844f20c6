//go:build linux

package celerisgrpc_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	celerisgrpc "github.com/celeris-dev/celeris/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// TestUpgradeHelper is a gRPC server process for TestUpgradeGRPC (when
// CELERIS_GRPC_HELPER is set), upgraded on SIGHUP.
func TestUpgradeHelper(t *testing.T) {
	if os.Getenv("CELERIS_GRPC_HELPER") == "" {
		t.Skip("the server process of TestUpgradeGRPC")
	}
	srv := celerisgrpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", EventLoops: 1})
	s.POST("/*rpc", celeris.Adapt(srv))
	go func() {
		<-s.Ready()
		celeristest.PrintReady("addr", s.Addr().String())
	}()
	err := s.StartGraceful(20 * time.Second)
	fmt.Fprintf(os.Stderr, "helper %d: StartGraceful returned %v\n", os.Getpid(), err)
	os.Exit(0)
}

// TestUpgradeGRPC: grpc-go's client keeps sending health Checks on one
// ClientConn while the server process upgrades itself twice: none fails (the
// old process's GOAWAY sends the client to a new connection, served by the new
// process), and a health Watch open across an upgrade ends with Unavailable,
// as under grpc-go's GracefulStop.
func TestUpgradeGRPC(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	p := celeristest.StartTestProcess(t, "TestUpgradeHelper", "CELERIS_GRPC_HELPER=1")
	cur := p.Next(30 * time.Second)
	cc := dialPlain(t, cur.Values["addr"])
	hc := healthpb.NewHealthClient(cc)

	var ok, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, err := hc.Check(ctx, &healthpb.HealthCheckRequest{})
				cancel()
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				} else {
					ok.Add(1)
				}
			}
		}()
	}
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		watch, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if m, err := watch.Recv(); err != nil || m.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("watch: %v %v", m, err)
		}
		time.Sleep(200 * time.Millisecond)
		if err := syscall.Kill(cur.Pid, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		n := p.Next(30 * time.Second)
		if _, err := watch.Recv(); status.Code(err) != codes.Unavailable {
			t.Fatalf("upgrade %d: the Watch ended with %v, want Unavailable", i+1, err)
		}
		cancel()
		celeristest.WaitGone(t, cur.Pid, 30*time.Second)
		cur = n
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("gRPC health Checks across 2 upgrades: %d answered, %d failed", ok.Load(), failed.Load())
	if failed.Load() != 0 {
		t.Fatalf("%d Checks failed, first: %v", failed.Load(), firstErr.Load())
	}
	_ = syscall.Kill(cur.Pid, syscall.SIGTERM)
}
