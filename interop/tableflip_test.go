//go:build linux

package interop

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/cloudflare/tableflip"
)

// tableflipEnv is tableflip's mark of a process it started (v1.2.3,
// parent.go).
const tableflipEnv = "TABLEFLIP_HAS_PARENT_7DIU3"

// TestTableflipProcess is the server process of TestTableflipUpgrade (when
// CELERIS_TABLEFLIP_FIRST is set): the first process serves with
// cloudflare/tableflip (a net/http server on tableflip's listener) when it is
// "tableflip", with a celeris Server when it is "celeris"; on SIGHUP it
// upgrades, and the process it starts (in tableflip's environment) serves with
// the other one on the same listener.
func TestTableflipProcess(t *testing.T) {
	first := os.Getenv("CELERIS_TABLEFLIP_FIRST")
	if first == "" {
		t.Skip("the server process of TestTableflipUpgrade")
	}
	const addr = "127.0.0.1:0" // the listener's name in tableflip's environment
	child := os.Getenv(tableflipEnv) != ""
	if (first == "celeris") != child {
		s := celeris.New(celeris.Config{Addr: addr})
		s.GET("/who", func(c *celeris.Context) error { return c.String(200, "celeris") })
		go func() { <-s.Ready(); celeristest.PrintReady("addr", s.Addr().String()) }()
		err := s.StartGraceful(10 * time.Second) // upgrades on SIGHUP
		fmt.Fprintln(os.Stderr, "celeris process:", err)
		os.Exit(0)
	}
	upg, err := tableflip.New(tableflip.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := upg.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "tableflip") })}
	go func() { _ = srv.Serve(ln) }()
	if err := upg.Ready(); err != nil {
		t.Fatal(err)
	}
	celeristest.PrintReady("addr", ln.Addr().String())
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP, syscall.SIGTERM)
	if sig := <-hup; sig == syscall.SIGHUP {
		if err := upg.Upgrade(); err != nil {
			fmt.Fprintln(os.Stderr, "tableflip upgrade:", err)
			os.Exit(1)
		}
	}
	_ = srv.Close()
	os.Exit(0)
}

// TestTableflipUpgrade: a process that serves with cloudflare/tableflip
// upgrades into a celeris Server, which finds the listener in tableflip's
// environment, serves on it and tells tableflip it is ready (tableflip's
// Upgrade returns and the old process exits); and a celeris Server's Upgrade
// starts a process that serves with tableflip on the listener passed.
func TestTableflipUpgrade(t *testing.T) {
	for _, tc := range []struct{ first, then string }{{"tableflip", "celeris"}, {"celeris", "tableflip"}} {
		t.Run(tc.first+"-to-"+tc.then, func(t *testing.T) {
			p := celeristest.StartTestProcess(t, "TestTableflipProcess", "CELERIS_TABLEFLIP_FIRST="+tc.first)
			tableflipUpgrade(t, p, tc.first, tc.then)
		})
	}
}

func tableflipUpgrade(t *testing.T, p *celeristest.Processes, before, after string) {
	first := p.Next(20 * time.Second)
	addr := first.Values["addr"]
	who := func() string {
		t.Helper()
		resp, err := http.Get("http://" + addr + "/who")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := who(); got != before {
		t.Fatalf("before the upgrade: %q", got)
	}
	if err := syscall.Kill(first.Pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	second := p.Next(20 * time.Second)
	if second.Values["addr"] != addr {
		t.Fatalf("the new process serves on %s, want the inherited %s", second.Values["addr"], addr)
	}
	celeristest.WaitGone(t, first.Pid, 20*time.Second) // its Upgrade returned: the new process said it is ready
	if got := who(); got != after {
		t.Fatalf("after the upgrade: %q", got)
	}
	_ = syscall.Kill(second.Pid, syscall.SIGTERM)
	celeristest.WaitGone(t, second.Pid, 20*time.Second)
}
