//go:build linux

package celeris_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/websocket"
)

// The tests of socket activation and Upgrade run this test binary as a server
// process: TestHelperServer serves when CELERIS_HELPER is set, and prints a
// line "READY pid=N addr=A tls=T" on stdout once it serves
// (celeristest.PrintReady). Its Upgrade starts
// the same binary with the same arguments and environment, so the new process
// is a helper server too.

// helperEnv is the switch that makes TestHelperServer serve.
const helperEnv = "CELERIS_HELPER"

func TestHelperServer(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("a server process for the activation and upgrade tests")
	}
	if f := os.Getenv("CELERIS_HELPER_FAIL"); f != "" {
		if _, err := os.Stat(f); err == nil {
			fmt.Fprintf(os.Stderr, "helper %d: exiting before it serves, as asked\n", os.Getpid())
			os.Exit(3)
		}
	}
	if f := os.Getenv("CELERIS_HELPER_HANG"); f != "" {
		if _, err := os.Stat(f); err == nil {
			fmt.Fprintf(os.Stderr, "helper %d: hanging before it serves, as asked\n", os.Getpid())
			// A new process that never serves, on purpose: it waits for the
			// signal that stops it.
			stop := make(chan os.Signal, 1)
			signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
			<-stop
			os.Exit(1)
		}
	}
	cfg := celeris.Config{
		Addr:          "127.0.0.1:0",
		TLSAddr:       "127.0.0.1:0",
		TLSConfig:     &tls.Config{Certificates: []tls.Certificate{selfSigned()}},
		Engine:        celeris.Engine(os.Getenv("CELERIS_HELPER_ENGINE")),
		EventLoops:    2,
		ShutdownDelay: 0,
		Logger:        slog.New(slog.NewTextHandler(os.Stderr, nil)),
	}
	if d, err := time.ParseDuration(os.Getenv("CELERIS_HELPER_DELAY")); err == nil {
		cfg.ShutdownDelay = d
	}
	s := celeris.New(cfg)
	pid := strconv.Itoa(os.Getpid())
	s.GET("/pid", func(c *celeris.Context) error { return c.String(200, pid) })
	// /slow?ms=N answers after N ms; with hold=1 it first says on stderr that it
	// runs and waits for the server to begin its drain (a request in flight
	// across a drain).
	s.GET("/slow", func(c *celeris.Context) error {
		if c.Query("hold") != "" {
			fmt.Fprintf(os.Stderr, "helper %s: /slow held\n", pid)
			<-s.ShuttingDown()
		}
		ms, _ := strconv.Atoi(c.Query("ms"))
		testkit.Slow(time.Duration(ms) * time.Millisecond) // a sleep: a request still running some time into a drain, which marks busy connections to close with no event a handler sees
		return c.String(200, pid)
	})
	s.GET("/ws", websocket.Handler(nil, func(c *websocket.Conn) {
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	}))
	s.GET("/healthz", s.HealthHandler())
	s.GET("/readyz", s.ReadyHandler())
	go func() {
		<-s.Ready()
		celeristest.PrintReady("addr", s.Addr().String(), "tls", s.TLSAddr().String())
	}()
	err := s.StartGraceful(20 * time.Second)
	fmt.Fprintf(os.Stderr, "helper %s: StartGraceful returned %v\n", pid, err)
	os.Exit(0)
}

// startHelper starts the helper server with env added, files as descriptors
// 3 on and, with systemd set, LISTEN_PID set to the process's own id (sh's
// exec keeps it).
func startHelper(t *testing.T, env []string, files []*os.File, systemd bool) *celeristest.Processes {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run=^TestHelperServer$"}
	var cmd *exec.Cmd
	if systemd {
		cmd = exec.Command("/bin/sh", append([]string{"-c", `LISTEN_PID=$$ exec "$0" "$@"`, self}, args...)...)
	} else {
		cmd = exec.Command(self, args...)
	}
	cmd.Env = append(append(os.Environ(), helperEnv+"=1"), env...)
	cmd.ExtraFiles = files
	return celeristest.StartProcesses(t, cmd)
}

// selfSigned is a certificate for 127.0.0.1 and localhost.
func selfSigned() tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "localhost"},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}
