//go:build linux

package celerisgrpc_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
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
		fmt.Printf("READY pid=%d addr=%s\n", os.Getpid(), s.Addr())
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
	cmd := exec.Command(os.Args[0], "-test.run=^TestUpgradeHelper$")
	cmd.Env = append(os.Environ(), "CELERIS_GRPC_HELPER=1")
	// Not StdoutPipe: Wait closes that once this process exits, and the
	// processes it started by upgrading write to the same pipe.
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd.Stdout = w
	cmd.Stderr = os.Stderr
	err = cmd.Start()
	w.Close() // the processes hold it
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	type ready struct {
		pid  int
		addr string
	}
	readyc := make(chan ready, 4)
	var pidsMu sync.Mutex
	var pids []int
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r ready
			if _, err := fmt.Sscanf(sc.Text(), "READY pid=%d addr=%s", &r.pid, &r.addr); err == nil {
				pidsMu.Lock()
				pids = append(pids, r.pid)
				pidsMu.Unlock()
				readyc <- r
			}
		}
	}()
	t.Cleanup(func() {
		pidsMu.Lock()
		defer pidsMu.Unlock()
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	next := func() ready {
		t.Helper()
		select {
		case r := <-readyc:
			return r
		case <-time.After(30 * time.Second):
			t.Fatal("no server process said it serves")
			return ready{}
		}
	}
	cur := next()
	cc := dialPlain(t, cur.addr)
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
		if err := syscall.Kill(cur.pid, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		n := next()
		if _, err := watch.Recv(); status.Code(err) != codes.Unavailable {
			t.Fatalf("upgrade %d: the Watch ended with %v, want Unavailable", i+1, err)
		}
		cancel()
		deadline := time.Now().Add(30 * time.Second)
		for alive(cur.pid) {
			if time.Now().After(deadline) {
				t.Fatalf("upgrade %d: the old process %d still runs", i+1, cur.pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
		cur = n
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("gRPC health Checks across 2 upgrades: %d answered, %d failed", ok.Load(), failed.Load())
	if failed.Load() != 0 {
		t.Fatalf("%d Checks failed, first: %v", failed.Load(), firstErr.Load())
	}
	_ = syscall.Kill(cur.pid, syscall.SIGTERM)
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}
