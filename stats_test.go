package celeris

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// TestStatsCounts: open connections, active requests and HTTP/2 streams.
func TestStatsCounts(t *testing.T) {
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	s, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/hold", func(c *Context) error {
			entered <- struct{}{}
			<-release
			return c.String(200, "ok")
		})
	})
	done := make(chan struct{}, 2)
	for _, client := range []*http.Client{h1Client(), xnetH2cClient()} {
		go func() {
			resp, err := client.Get("http://" + addr + "/hold")
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			done <- struct{}{}
		}()
	}
	<-entered
	<-entered
	st := s.Stats()
	if st.OpenConnections < 2 || st.ActiveRequests != 2 || st.ActiveStreams != 1 {
		t.Errorf("stats during two requests (one h2): %+v", st)
	}
	close(release)
	<-done
	<-done
	testkit.Until(2*time.Second, func() bool { return s.Stats().ActiveStreams == 0 })
	if st := s.Stats(); st.ActiveStreams != 0 || st.ActiveRequests != 0 {
		t.Errorf("stats after: %+v", st)
	}
}

// TestStatsPipelinedBatch: a worker's batch of pipelined requests counts whole
// while it runs (once, not per request as well), inline requests count while
// they run, and everything is back to 0 once answered.
func TestStatsPipelinedBatch(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{}, 4)
	release := make(chan struct{})
	var inlineSaw atomic.Int64 // written on the loop
	s, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/hold", func(c *Context) error {
			entered <- struct{}{}
			<-release
			return c.String(200, "ok")
		})
		s.GET("/quick", func(c *Context) error { return c.String(200, "ok") })
		s.GET("/inline-stats", func(c *Context) error {
			inlineSaw.Store(c.server.Stats().ActiveRequests)
			return c.String(200, "ok")
		}).Inline()
	})
	rc := dialRaw(t, addr)
	rc.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\nGET /quick HTTP/1.1\r\nHost: x\r\n\r\nGET /quick HTTP/1.1\r\nHost: x\r\n\r\n")
	<-entered
	if st := s.Stats(); st.ActiveRequests != 3 {
		t.Errorf("during a batch of 3: %+v", st)
	}
	close(release)
	for range 3 {
		if resp := rc.readResponse("GET"); resp.StatusCode != 200 {
			t.Fatal(resp.Status)
		}
	}
	if st := s.Stats(); st.ActiveRequests != 0 {
		t.Errorf("after the batch was answered: %+v", st)
	}
	rc.send("GET /inline-stats HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp := rc.readResponse("GET"); resp.StatusCode != 200 || inlineSaw.Load() != 1 {
		t.Errorf("%s; an inline handler saw %d active", resp.Status, inlineSaw.Load())
	}
}

// TestShutdownDeadlineCancelsContexts: a handler still running when the shutdown
// deadline passes sees its context cancelled, over both protocols.
func TestShutdownDeadlineCancelsContexts(t *testing.T) {
	s := New(Config{Addr: "127.0.0.1:0", EventLoops: 1, Engine: engineFor(t)})
	cancelled := make(chan string, 2)
	entered := make(chan struct{}, 2)
	s.GET("/wait", func(c *Context) error {
		entered <- struct{}{}
		select {
		case <-c.Context().Done():
			cancelled <- c.Proto()
		case <-time.After(10 * time.Second):
			cancelled <- "not cancelled"
		}
		return nil
	})
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	<-s.Ready()
	addr := s.Addr().String()
	for _, client := range []*http.Client{h1Client(), xnetH2cClient()} {
		go func() {
			if resp, err := client.Get("http://" + addr + "/wait"); err == nil {
				resp.Body.Close()
			}
		}()
	}
	<-entered
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); err == nil {
		t.Error("Shutdown returned nil although handlers outlived its deadline")
	}
	<-errc
	for i := 0; i < 2; i++ {
		select {
		case p := <-cancelled:
			if p == "not cancelled" {
				t.Fatal("a handler's context was not cancelled at the shutdown deadline")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("handler still running")
		}
	}
}

// TestShutdownBeforeStart: a Shutdown that comes before Start makes Start return.
func TestShutdownBeforeStart(t *testing.T) {
	s := New(Config{Addr: "127.0.0.1:0"})
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Start() }()
	select {
	case err := <-done:
		if err != http.ErrServerClosed {
			t.Fatalf("Start after Shutdown: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Start kept serving after Shutdown")
	}
}
