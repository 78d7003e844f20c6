//go:build linux

package celeris_test

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/celeristest"
)

// listenFile opens a TCP listener on 127.0.0.1:0 and returns its descriptor as
// a file (for a child process) and its address; the test's own copy closes.
func listenFile(t *testing.T) (*os.File, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, ln.Addr().String()
}

// getPid asks url's /pid which process answers.
func getPid(t *testing.T, c *http.Client, url string) int {
	t.Helper()
	resp, err := c.Get(url + "/pid")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	pid, err := strconv.Atoi(string(b))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s/pid: %d %q", url, resp.StatusCode, b)
	}
	return pid
}

var insecure = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true,
}}

// TestSocketActivation: a process started with sockets by systemd's protocol
// (LISTEN_PID, LISTEN_FDS, LISTEN_FDNAMES) serves on them instead of its
// addresses (127.0.0.1:0), matched by name ("https" first here: the names win
// over the order) or, unnamed, in order (plaintext, then TLS); on both engines
// (gnet hands the inherited plaintext socket to the std engine).
func TestSocketActivation(t *testing.T) {
	for _, tc := range []struct {
		name, engine, names string
		tlsFirst            bool
	}{
		{name: "named/gnet", engine: "gnet", names: "https:http", tlsFirst: true},
		{name: "named/std", engine: "std", names: "https:http", tlsFirst: true},
		{name: "unnamed/gnet", engine: "gnet", names: "unknown:unknown"},
		{name: "ordered/std", engine: "std"},
		{name: "named/default", engine: "", names: "http:https"},
		{name: "ordered/epoll", engine: "epoll"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plainF, plain := listenFile(t)
			tlsF, tlsAddr := listenFile(t)
			files := []*os.File{plainF, tlsF}
			if tc.tlsFirst {
				files = []*os.File{tlsF, plainF}
			}
			env := []string{"LISTEN_FDS=2", "CELERIS_HELPER_ENGINE=" + tc.engine}
			if tc.names != "" {
				env = append(env, "LISTEN_FDNAMES="+tc.names)
			}
			h := startHelper(t, env, files, true)
			r := h.Next(20 * time.Second)
			if r.Values["addr"] != plain || r.Values["tls"] != tlsAddr {
				t.Fatalf("serves on %v, want the inherited %s and %s", r.Values, plain, tlsAddr)
			}
			if pid := getPid(t, insecure, "http://"+plain); pid != r.Pid {
				t.Fatalf("plaintext answered by %d, want %d", pid, r.Pid)
			}
			resp, err := insecure.Get("https://" + tlsAddr + "/pid")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.ProtoMajor != 2 {
				t.Fatalf("TLS answered over %s, want HTTP/2", resp.Proto)
			}
			_ = h.Cmd.Process.Signal(os.Interrupt)
			celeristest.WaitGone(t, r.Pid, 10*time.Second)
		})
	}
}
