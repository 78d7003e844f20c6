// Package interop runs other projects' own test suites against Celeris: grpc-go's
// interop client cases and connect-go's client in every protocol. It is a module of
// its own so that the core module never depends on grpc or connect.
package interop

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	grpcinterop "google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/grpc/interopcases"
)

// grpcCases: grpc-go's interop client cases that need no credentials or load
// balancer.
var grpcCases = interopcases.Names

const (
	envCase = "CELERIS_INTEROP_CASE"
	envAddr = "CELERIS_INTEROP_ADDR"
)

// newGRPCServer is grpc-go's interop test server.
func newGRPCServer() *grpc.Server {
	gs := grpc.NewServer()
	testgrpc.RegisterTestServiceServer(gs, grpcinterop.NewTestServer())
	return gs
}

// startCeleris serves register's routes on 127.0.0.1:0 until the test ends.
func startCeleris(t *testing.T, cfg celeris.Config, register func(s *celeris.Server)) string {
	t.Helper()
	_, addr := celeristest.Serve(t, cfg, register)
	return addr
}

// startNetHTTP serves h over h2c with net/http and x/net's h2c handler: the
// reference the same cases run against, which shows the harness itself is sound.
func startNetHTTP(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h2c.NewHandler(h, &http2.Server{})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestGRPCInterop runs each case in a child process (grpc-go's cases end the
// process with log.Fatal on failure) against grpc-go's interop server mounted with
// celeris.Adapt, on worker routes (handlers may block, as gRPC's do).
func TestGRPCInterop(t *testing.T) {
	if os.Getenv(envCase) != "" {
		t.Skip("child process")
	}
	targets := map[string]string{
		"celeris-h2c": startCeleris(t, celeris.Config{}, func(s *celeris.Server) {
			s.POST("/*rpc", celeris.Adapt(newGRPCServer()))
		}),
		"nethttp-h2c": startNetHTTP(t, newGRPCServer()),
	}
	for _, name := range []string{"nethttp-h2c", "celeris-h2c"} {
		addr := targets[name]
		t.Run(name, func(t *testing.T) {
			for _, tc := range grpcCases {
				t.Run(tc, func(t *testing.T) {
					t.Parallel()
					runCase(t, tc, addr)
				})
			}
		})
	}
}

// runCase runs one interop case against addr in a child process.
func runCase(t *testing.T, tc, addr string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGRPCInteropChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCase+"="+tc, envAddr+"="+addr)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s against %s: %v\n%s", tc, addr, err, strings.TrimSpace(string(out)))
	}
}

// TestGRPCInteropChild is the child side of TestGRPCInterop: one case, one
// client connection.
func TestGRPCInteropChild(t *testing.T) {
	tc, addr := os.Getenv(envCase), os.Getenv(envAddr)
	if tc == "" {
		t.Skip("run by TestGRPCInterop")
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := interopcases.Run(ctx, tc, conn); err != nil {
		t.Fatal(err)
	}
}
