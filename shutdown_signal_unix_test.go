//go:build unix

package celeris

import (
	"bufio"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestStartGracefulCleanExit: after SIGTERM, StartGraceful shuts down and
// returns nil (so the guide's `if err := s.StartGraceful(...); err != nil`
// exits 0), even with an SSE stream open.
func TestStartGracefulCleanExit(t *testing.T) {
	s := New(Config{Addr: "127.0.0.1:0", EventLoops: 1})
	sseUntilShutdown(s)
	errc := make(chan error, 1)
	go func() { errc <- s.StartGraceful(5 * time.Second) }()
	select {
	case <-s.Ready():
	case err := <-errc:
		t.Fatalf("StartGraceful: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	resp, err := h1Client().Get("http://" + s.Addr().String() + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("StartGraceful returned %v after SIGTERM, want nil", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("StartGraceful still running 3s after SIGTERM")
	}
}
