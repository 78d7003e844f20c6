package celerisgrpc_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	grpcinterop "google.golang.org/grpc/interop"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	celerisgrpc "github.com/celeris-dev/celeris/grpc"
	"github.com/celeris-dev/celeris/grpc/interopcases"
	"github.com/celeris-dev/celeris/internal/selfcert"
)

// grpcCases: grpc-go's interop client cases that need no credentials or load
// balancer.
var grpcCases = interopcases.Names

// netHTTPCases run against the net/http mount (ServeHTTP).
var netHTTPCases = []string{
	"empty_unary", "large_unary", "client_streaming", "server_streaming", "ping_pong",
	"custom_metadata", "status_code_and_message", "unimplemented_method",
}

const (
	envCase = "CELERISGRPC_INTEROP_CASE"
	envAddr = "CELERISGRPC_INTEROP_ADDR"
	envCA   = "CELERISGRPC_INTEROP_CA" // PEM file: dial with TLS trusting it
)

// newServer is grpc-go's interop test service on a celerisgrpc.Server.
func newServer(opts ...celerisgrpc.Option) *celerisgrpc.Server {
	srv := celerisgrpc.NewServer(opts...)
	testgrpc.RegisterTestServiceServer(srv, grpcinterop.NewTestServer())
	return srv
}

// startCeleris serves srv natively (celeris.Adapt recognises it) on cfg's engine.
func startCeleris(t *testing.T, cfg celeris.Config, h http.Handler) string {
	t.Helper()
	_, addr := celeristest.Serve(t, cfg, func(s *celeris.Server) {
		s.POST("/*rpc", celeris.Adapt(h))
	})
	return addr
}

// startCelerisTLS serves h over TLS (ALPN h2) on the std engine and returns
// its address and a PEM file with the certificate to trust.
func startCelerisTLS(t *testing.T, h http.Handler) (addr, caFile string) {
	t.Helper()
	cert, err := selfcert.New("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, cert.CertPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})
	s.POST("/*rpc", celeris.Adapt(h))
	errc := make(chan error, 1)
	go func() { errc <- s.StartTLS("", "") }()
	select {
	case <-s.Ready():
	case err := <-errc:
		t.Fatalf("StartTLS: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("TLS server did not start")
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-errc
	})
	return s.Addr().String(), caFile
}

// startNetHTTP serves h under net/http with h2c.
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

// TestGRPCInterop runs grpc-go's interop client cases, each in a child process
// (they end the process with log.Fatal on failure), against the native server
// on Celeris over h2c (gnet engine) and TLS (std engine), and a subset against
// the same server mounted under net/http (ServeHTTP).
func TestGRPCInterop(t *testing.T) {
	if os.Getenv(envCase) != "" {
		t.Skip("child process")
	}
	type target struct {
		addr, ca string
		cases    []string
	}
	tlsAddr, ca := startCelerisTLS(t, newServer())
	targets := map[string]target{
		"celeris-h2c": {addr: startCeleris(t, celeris.Config{Engine: celeris.EngineGnet}, newServer()), cases: grpcCases},
		"celeris-tls": {addr: tlsAddr, ca: ca, cases: grpcCases},
		"nethttp-h2c": {addr: startNetHTTP(t, newServer()), cases: netHTTPCases},
	}
	for _, name := range []string{"celeris-h2c", "celeris-tls", "nethttp-h2c"} {
		tg := targets[name]
		t.Run(name, func(t *testing.T) {
			for _, tc := range tg.cases {
				t.Run(tc, func(t *testing.T) {
					t.Parallel()
					runCase(t, tc, tg.addr, tg.ca)
				})
			}
		})
	}
}

// runCase runs one interop case against addr in a child process.
func runCase(t *testing.T, tc, addr, ca string) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestGRPCInteropChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCase+"="+tc, envAddr+"="+addr, envCA+"="+ca)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s against %s: %v\n%s", tc, addr, err, strings.TrimSpace(string(out)))
	}
}

// dial connects to addr, with TLS trusting the PEM file ca when ca is set.
func dial(t *testing.T, addr, ca string) *grpc.ClientConn {
	t.Helper()
	creds := insecure.NewCredentials()
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		creds = credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// TestGRPCInteropChild is the child side of TestGRPCInterop.
func TestGRPCInteropChild(t *testing.T) {
	tc, addr := os.Getenv(envCase), os.Getenv(envAddr)
	if tc == "" {
		t.Skip("run by TestGRPCInterop")
	}
	conn := dial(t, addr, os.Getenv(envCA))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := interopcases.Run(ctx, tc, conn); err != nil {
		t.Fatal(err)
	}
}
