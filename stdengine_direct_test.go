package celeris

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// directRoutes: a short handler, one that outlasts the std engine's direct-run
// watch (detached by its timer), one that streams (detached by its first Flush),
// one that runs until release is closed, and one that waits for its context.
func directRoutes(cancelled chan<- struct{}, release <-chan struct{}) func(s *Server) {
	return func(s *Server) {
		s.GET("/fast/:n", func(c *Context) error { return c.String(200, "fast "+c.Param("n")) })
		s.GET("/slow/:n", func(c *Context) error {
			testkit.Slow(15 * time.Millisecond) // a sleep: the route outlasts the engine's direct-run watch, which detaches it on a timer; nothing in the handler marks the detach
			return c.String(200, "slow "+c.Param("n"))
		})
		s.GET("/stream/:n", func(c *Context) error {
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			for i := 0; i < 3; i++ {
				fmt.Fprintf(w, "part%d-%s;", i, c.Param("n"))
				if err := w.Flush(); err != nil {
					return err
				}
			}
			return nil
		})
		s.GET("/inline/:n", func(c *Context) error { return c.String(200, "inline "+c.Param("n")) }).Inline()
		s.GET("/long", func(c *Context) error {
			<-release
			return c.String(200, "long")
		})
		s.GET("/ctx", func(c *Context) error {
			select {
			case <-c.Context().Done():
				cancelled <- struct{}{}
			case <-time.After(10 * time.Second):
			}
			return nil
		})
	}
}

// TestStdDirectRuns: on the std engine a short HTTP/1.1 handler runs on the
// connection's own goroutine (no worker starts), while handlers that outlast the
// watch, stream, or wait for a client that left behave as on a worker, and the
// connection goes on serving in order afterwards, pipelined or not.
func TestStdDirectRuns(t *testing.T) {
	withEngine(t, EngineStd)
	cancelled := make(chan struct{}, 1)
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	s, addr := startServer(t, Config{}, directRoutes(cancelled, release))
	t.Cleanup(free) // runs before the server's shutdown, which waits for /long

	rc := dialRaw(t, addr)
	for i := 0; i < 50; i++ {
		rc.send(fmt.Sprintf("GET /fast/%d HTTP/1.1\r\nHost: x\r\n\r\n", i))
		if got := bodyString(t, rc.readResponse("GET")); got != fmt.Sprintf("fast %d", i) {
			t.Fatalf("answer %d: %q", i, got)
		}
	}
	if n := s.pool.Workers(); n != 0 {
		t.Fatalf("%d worker goroutines after short requests on the std engine, want 0 (direct runs)", n)
	}

	// One connection, every kind, one at a time and then pipelined.
	kinds := []string{"fast", "slow", "fast", "stream", "fast", "slow", "stream", "fast"}
	want := func(kind string, i int) string {
		if kind == "stream" {
			return fmt.Sprintf("part0-%d;part1-%d;part2-%d;", i, i, i)
		}
		return fmt.Sprintf("%s %d", kind, i)
	}
	for i, k := range kinds {
		rc.send(fmt.Sprintf("GET /%s/%d HTTP/1.1\r\nHost: x\r\n\r\n", k, i))
		if got := bodyString(t, rc.readResponse("GET")); got != want(k, i) {
			t.Fatalf("%s %d: %q", k, i, got)
		}
	}
	var all strings.Builder
	for i, k := range kinds {
		fmt.Fprintf(&all, "GET /%s/%d HTTP/1.1\r\nHost: x\r\n\r\n", k, i)
	}
	rc.send(all.String())
	for i, k := range kinds {
		if got := bodyString(t, rc.readResponse("GET")); got != want(k, i) {
			t.Fatalf("pipelined %s %d: %q", k, i, got)
		}
	}

	// Many connections at once.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for c := 0; c < 16; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			rc := dialRaw(t, addr)
			for i := 0; i < 12; i++ {
				k := kinds[(c+i)%len(kinds)]
				rc.send(fmt.Sprintf("GET /%s/%d HTTP/1.1\r\nHost: x\r\n\r\n", k, i))
				resp, err := readResponseErr(rc, "GET")
				if err != nil {
					errs <- err
					return
				}
				if resp != want(k, i) {
					errs <- fmt.Errorf("conn %d: %s %d: %q", c, k, i, resp)
					return
				}
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// An inline route's answer pipelined before a long handler leaves while
	// the handler still runs: /long ends only once that answer has been read
	// (or the read failed on the connection's deadline).
	rc3 := dialRaw(t, addr)
	rc3.send("GET /inline/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /long HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = rc3.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	first, err := readResponseErr(rc3, "GET")
	free()
	if err != nil {
		t.Fatalf("the answer before a long handler did not come while it ran: %v", err)
	}
	if first != "inline 1" {
		t.Fatalf("inline: %q", first)
	}
	if got := bodyString(t, rc3.readResponse("GET")); got != "long" {
		t.Fatalf("long: %q", got)
	}

	// A handler waiting for its context: the client leaves, the context ends.
	rc2 := dialRaw(t, addr)
	rc2.send("GET /ctx HTTP/1.1\r\nHost: x\r\n\r\n")
	waitFor(t, "/ctx to run", func() bool { return s.Stats().ActiveRequests == 1 })
	rc2.c.Close()
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the context of a handler on the std engine was not cancelled when its client left")
	}
}

// readResponseErr is readResponse for goroutines other than the test's: it
// returns the body or an error instead of failing the test.
func readResponseErr(rc *rawConn, method string) (string, error) {
	resp, err := http.ReadResponse(rc.br, &http.Request{Method: method})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}
