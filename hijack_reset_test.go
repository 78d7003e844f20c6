package celeris

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// A Hijack asked for by a worker, on a connection the client reset before the
// loop served it, returns an error instead of waiting forever: a waiting
// handler would hold its worker for good, and with MaxWorkers reached the
// server would answer 503 to everyone. The gnet loop is kept busy by an inline
// handler while the client resets and the handler asks, so that the loop sees
// the reset before the Hijack.
func TestHijackAfterClientReset(t *testing.T) {
	for _, e := range []Engine{EngineGnet, EngineStd} {
		if e == EngineGnet && !gnetAvailable {
			continue
		}
		t.Run(string(e), func(t *testing.T) { testHijackAfterClientReset(t, e) })
	}
}

func testHijackAfterClientReset(t *testing.T, e Engine) {
	reset := make(chan struct{})    // the client reset its connection
	blocking := make(chan struct{}) // the inline handler holds the loop
	unblock := make(chan struct{})  // the inline handler lets the loop go
	waiting := make(chan struct{})  // the hijacking handler runs on its worker
	result := make(chan error, 1)
	_, addr := startServer(t, Config{Engine: e, EventLoops: 1, MaxWorkers: 2}, func(s *Server) {
		s.GET("/hijack", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			close(waiting)
			<-reset
			nc, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				_ = nc.Close()
			}
			result <- err
		}))
		s.GET("/block", func(c *Context) error {
			close(blocking)
			<-unblock
			return c.String(http.StatusOK, "blocked")
		}).Inline()
		s.GET("/ok", func(c *Context) error { return c.String(http.StatusOK, "ok") })
	})
	a, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(a, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-waiting
	b, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := io.WriteString(b, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-blocking:
	case <-time.After(5 * time.Second):
		t.Fatal("the inline route did not run")
	}
	var once sync.Once
	release := func() { once.Do(func() { close(unblock) }) }
	defer release()
	_ = a.(*net.TCPConn).SetLinger(0)
	_ = a.Close() // RST
	close(reset)
	// The loop goes on once the handler asked for its Hijack (or had its answer):
	// it then finds the reset and the Hijack both waiting.
	testkit.Wait(t, "the Hijack asked", func() bool {
		return len(result) > 0 || testkit.Parked("Hijack", "testHijackAfterClientReset")()
	})
	release()
	select {
	case err := <-result:
		t.Logf("Hijack: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Hijack still waits 5 s after the client reset the connection")
	}
	// The worker came back: a new request is served (MaxWorkers 2, one taken
	// by a waiting Hijack per reset otherwise).
	resp, err := http.Get("http://" + addr + "/ok")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "ok") {
		t.Fatalf("after the reset: %d %q", resp.StatusCode, body)
	}
}
