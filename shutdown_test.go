package celeris

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// TestGracefulShutdown: 1000 requests in flight at shutdown (600 over HTTP/1.1
// connections, 400 as h2c streams) all complete with 200; new connections are
// refused once shutdown began.
func TestGracefulShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	s := New(Config{Addr: "127.0.0.1:0", EventLoops: 2, Engine: engineFor(t)})
	var started atomic.Int32
	s.GET("/slow", func(c *Context) error {
		started.Add(1)
		testkit.Slow(1500 * time.Millisecond) // a sleep: the answers must come after every loop marked its connections to close, which no API shows (the listener closes before)
		return c.String(200, "done")
	})
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	<-s.Ready()
	addr := s.Addr().String()

	var wg sync.WaitGroup
	var ok atomic.Int32
	fail := make(chan error, 1000)
	get := func(client *http.Client) {
		defer wg.Done()
		resp, err := client.Get("http://" + addr + "/slow")
		if err != nil {
			fail <- err
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.ProtoMajor == 1 && !resp.Close {
			fail <- fmt.Errorf("HTTP/1.1 answer during shutdown lacks Connection: close")
			return
		}
		if resp.StatusCode != 200 || string(b) != "done" {
			fail <- fmt.Errorf("%d %q", resp.StatusCode, b)
			return
		}
		ok.Add(1)
	}
	for i := 0; i < 600; i++ {
		wg.Add(1)
		go get(h1Client())
	}
	for i := 0; i < 4; i++ {
		client := xnetH2cClient()
		for j := 0; j < 100; j++ {
			wg.Add(1)
			go get(client)
		}
	}
	testkit.Until(testkit.Timeout, func() bool { return started.Load() >= 1000 })
	if n := started.Load(); n < 1000 {
		t.Fatalf("only %d requests reached their handler", n)
	}
	shutdownDone := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		shutdownDone <- s.Shutdown(ctx)
	}()
	// Shutdown closes the listener first: wait until a dial is refused (a
	// connection accepted before that is closed at once, unasked).
	waitFor(t, "the listener to close", func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
	// A new connection gets no answer.
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = c.SetDeadline(time.Now().Add(3 * time.Second))
		_, _ = io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
		if b, err := io.ReadAll(c); len(b) > 0 {
			t.Errorf("new connection during shutdown was served: %q %v", b, err)
		}
		c.Close()
	}
	wg.Wait()
	close(fail)
	for err := range fail {
		t.Error(err)
	}
	if err := <-shutdownDone; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	<-errc
	if n := ok.Load(); n != 1000 {
		t.Fatalf("%d of 1000 in-flight requests completed", n)
	}
}
