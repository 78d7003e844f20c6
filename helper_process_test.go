//go:build linux

package celeris_test

import (
	"bufio"
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
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/websocket"
)

// The tests of socket activation and Upgrade run this test binary as a server
// process: TestHelperServer serves when CELERIS_HELPER is set, and prints a
// line "READY pid=N addr=A tls=T" on stdout once it serves. Its Upgrade starts
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
	s.GET("/slow", func(c *celeris.Context) error {
		ms, _ := strconv.Atoi(c.Query("ms"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
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
		fmt.Printf("READY pid=%s addr=%s tls=%s\n", pid, s.Addr(), s.TLSAddr())
	}()
	err := s.StartGraceful(20 * time.Second)
	fmt.Fprintf(os.Stderr, "helper %s: StartGraceful returned %v\n", pid, err)
	os.Exit(0)
}

// helper is a server process started by a test.
type helper struct {
	t     *testing.T
	cmd   *exec.Cmd
	ready chan readyLine // READY lines of this process and of those it starts
	mu    sync.Mutex
	log   strings.Builder // stderr of every process of the chain
	pids  []int
}

type readyLine struct {
	pid       int
	addr, tls string
}

// startHelper starts the helper server with env added, files as descriptors
// 3 on and, with systemd set, LISTEN_PID set to the process's own id (sh's
// exec keeps it). It kills every process of the chain when the test ends.
func startHelper(t *testing.T, env []string, files []*os.File, systemd bool) *helper {
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
	h := &helper{t: t, cmd: cmd, ready: make(chan readyLine, 16)}
	// Not StdoutPipe: Wait closes that once this process exits, and the
	// processes it started by upgrading write to the same pipe.
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Close() })
	cmd.Stdout = w
	cmd.Stderr = (*helperLog)(h)
	err = cmd.Start()
	w.Close() // the processes hold it
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var r readyLine
			if _, err := fmt.Sscanf(sc.Text(), "READY pid=%d addr=%s tls=%s", &r.pid, &r.addr, &r.tls); err == nil {
				h.mu.Lock()
				h.pids = append(h.pids, r.pid)
				h.mu.Unlock()
				h.ready <- r
			}
		}
	}()
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() {
		h.mu.Lock()
		pids := append([]int(nil), h.pids...)
		h.mu.Unlock()
		for _, pid := range pids {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("server processes' stderr:\n%s", h.stderr())
		}
	})
	return h
}

type helperLog helper

func (l *helperLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.Write(p)
}

func (h *helper) stderr() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.log.String()
}

// next waits for the next READY line.
func (h *helper) next(d time.Duration) readyLine {
	h.t.Helper()
	select {
	case r := <-h.ready:
		return r
	case <-time.After(d):
		h.t.Fatalf("no server process said it serves within %v", d)
		return readyLine{}
	}
}

// waitGone waits until process pid has exited (or is a zombie nobody reaps).
func waitGone(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		// pid (comm) STATE ...: the state follows the last ')'.
		if i := strings.LastIndexByte(string(b), ')'); i > 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("process %d still runs %v after it was replaced", pid, d)
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
