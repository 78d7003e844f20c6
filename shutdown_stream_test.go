package celeris

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// sseUntilShutdown registers /events: an endless SSE stream that ends when the
// client goes away or the server begins shutting down.
func sseUntilShutdown(s *Server) {
	s.GET("/events", func(c *Context) error {
		sse, err := c.SSE()
		if err != nil {
			return err
		}
		if err := sse.Send(Event{Data: "hello"}); err != nil {
			return err
		}
		select {
		case <-c.Context().Done():
		case <-c.ShuttingDown():
		}
		return nil
	})
}

// TestShutdownEndsSSEStreams: an open SSE stream that watches c.ShuttingDown()
// ends as soon as Shutdown begins, so Shutdown returns nil at once instead of
// waiting for its whole timeout and failing with context.DeadlineExceeded,
// over HTTP/1.1 and h2c.
func TestShutdownEndsSSEStreams(t *testing.T) {
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		s := New(Config{Addr: "127.0.0.1:0", EventLoops: 1})
		sseUntilShutdown(s)
		errc := runServer(t, s)
		resp, err := cl.Get("http://" + s.Addr().String() + "/events")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		if line, err := br.ReadString('\n'); err != nil || line != "data: hello\n" {
			t.Fatalf("first event %q %v", line, err)
		}
		select {
		case <-s.ShuttingDown():
			t.Fatal("ShuttingDown closed before Shutdown")
		default:
		}
		// The stream ends on ShuttingDown, so Shutdown returns long before its
		// deadline; a stream it had to wait out would end only with ctx.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		start := time.Now()
		if err := s.Shutdown(ctx); err != nil {
			t.Fatalf("Shutdown: %v after %v", err, time.Since(start))
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("Shutdown took %v", d)
		}
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
			t.Fatalf("Start returned %v", err)
		}
	})
}

// TestDocsDoNotFatalStartGraceful: StartGraceful returns nil after a clean
// shutdown; log.Fatal(s.StartGraceful(...)) would exit 1 then.
func TestDocsDoNotFatalStartGraceful(t *testing.T) {
	for _, name := range []string{"docs/guide.md", "README.md", "server.go"} {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "log.Fatal(s.StartGraceful(") {
			t.Errorf("%s: log.Fatal(s.StartGraceful(...)) exits 1 after a clean shutdown", name)
		}
	}
}
