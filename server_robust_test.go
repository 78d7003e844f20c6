package celeris

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// big16 is allocated on first use: a 16 MiB global would raise the heap (and the GC
// goal) of every test process, including the memory-measuring child of
// TestUploadStreamsWithBoundedMemory.
var big16 = sync.OnceValue(func() []byte { return bytes.Repeat([]byte("x"), 16<<20) })

func robustRoutes(s *Server) {
	s.GET("/big", func(c *Context) error { return c.Blob(200, "application/octet-stream", big16()) })
	s.GET("/1m", func(c *Context) error { return c.Blob(200, "application/octet-stream", big16()[:1<<20]) })
	s.POST("/count", func(c *Context) error {
		n, err := io.Copy(io.Discard, c.BodyReader())
		if err != nil {
			return err
		}
		return c.String(200, fmt.Sprint(n))
	})
	s.POST("/upload", func(c *Context) error {
		b, err := c.Body()
		if err != nil {
			return err
		}
		return c.String(200, fmt.Sprint(len(b)))
	})
}

// A request that closes the connection still gets its body read and answered.
func TestH1CloseRequestWithBody(t *testing.T) {
	_, addr := startServer(t, Config{}, robustRoutes)
	for _, req := range []string{
		"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
		"POST /upload HTTP/1.0\r\nContent-Length: 5\r\n\r\nhello",
		"POST /count HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	} {
		rc := dialRaw(t, addr)
		rc.send(req)
		if got := bodyString(t, rc.readResponse("POST")); got != "5" {
			t.Fatalf("%q: body %q", req, got)
		}
		rc.expectClosed()
	}
}

// A large response before a close reaches a slow reader whole.
func TestH1CloseDoesNotTruncate(t *testing.T) {
	_, addr := startServer(t, Config{}, robustRoutes)
	rc := dialRaw(t, addr)
	rc.send("GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	waitSocketFull(t, rc.c.(*net.TCPConn)) // a reader that is late: the answer waits in the server when it closes
	if n := len(bodyString(t, rc.readResponse("GET"))); n != len(big16()) {
		t.Fatalf("got %d of %d bytes", n, len(big16()))
	}
}

// Streamed chunked bodies count against MaxRequestBodySize exactly once.
func TestH1ChunkedStreamLimit(t *testing.T) {
	_, addr := startServer(t, Config{MaxRequestBodySize: 4 << 20}, robustRoutes)
	send := func(size int) (int, string) {
		rc := dialRaw(t, addr)
		var b strings.Builder
		b.WriteString("POST /count HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
		chunk := strings.Repeat("a", 1<<20)
		for sent := 0; sent < size; sent += len(chunk) {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", len(chunk), chunk)
		}
		b.WriteString("0\r\n\r\n")
		// The server may answer 413 and close before taking the whole body, so a
		// failed write is expected here (and t.Fatal belongs to the test goroutine).
		go func() { _, _ = io.WriteString(rc.c, b.String()) }()
		resp := rc.readResponse("POST")
		return resp.StatusCode, bodyString(t, resp)
	}
	if st, body := send(3 << 20); st != 200 || body != "3145728" {
		t.Fatalf("3 MiB under a 4 MiB limit: %d %q", st, body)
	}
	if st, _ := send(6 << 20); st != 413 {
		t.Fatalf("6 MiB over a 4 MiB limit: %d", st)
	}
}

// No interim 100 once the final response started.
func TestH1NoContinueAfterFinalResponse(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.POST("/early", func(c *Context) error {
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			_, _ = w.Write([]byte("hello"))
			_ = w.Flush()
			_, _ = io.Copy(io.Discard, c.BodyReader())
			return nil
		})
	})
	rc := dialRaw(t, addr)
	_ = rc.c.SetReadDeadline(time.Now().Add(3 * time.Second))
	rc.send("POST /early HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
	line, err := rc.br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("first line %q %v, want the final 200", line, err)
	}
	// Send the body now: the rest of the stream must be chunked data, never a 100.
	rc.send(strings.Repeat("z", 100000))
	rest, _ := io.ReadAll(io.LimitReader(rc.br, 4096))
	if strings.Contains(string(rest), "100 Continue") {
		t.Fatalf("interim response inside the body: %q", rest)
	}
}

// errSSESetup marks a failure of TestH1StreamWriteAfterCloseFails before its check.
var errSSESetup = errors.New("stream")

// A streaming handler learns that its client went away.
func TestH1StreamWriteAfterCloseFails(t *testing.T) {
	failed := make(chan error, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/sse", func(c *Context) error {
			sse, err := c.SSE()
			if err != nil {
				return err
			}
			if err := sse.Send(Event{Data: "tick"}); err != nil {
				failed <- fmt.Errorf("%w: the first event: %v", errSSESetup, err)
				return nil
			}
			// The client leaves once it has the first event; the server sees
			// it go (the request's context ends), and then Send fails (once the
			// engine found the socket closed).
			select {
			case <-c.Context().Done():
			case <-time.After(5 * time.Second):
				failed <- fmt.Errorf("%w: the request's context still runs 5 s after the client closed", errSSESetup)
				return nil
			}
			var serr error
			testkit.Until(5*time.Second, func() bool { serr = sse.Send(Event{Data: "tick"}); return serr != nil })
			failed <- serr
			return nil
		})
	})
	rc := dialRaw(t, addr)
	rc.send("GET /sse HTTP/1.1\r\nHost: x\r\n\r\n")
	for { // the stream runs: its first event came
		line, err := rc.br.ReadString('\n')
		if err != nil {
			t.Fatalf("before the first event: %v", err)
		}
		if line == "data: tick\n" {
			break
		}
	}
	rc.c.Close()
	if err := <-failed; err == nil {
		t.Fatal("Send kept succeeding for 5 s after the client closed")
	} else if errors.Is(err, errSSESetup) {
		t.Fatal(err)
	}
}

// A streamed upload that stalls is closed after the idle timeout.
func TestH1StalledBodyTimesOut(t *testing.T) {
	_, addr := startServer(t, Config{ReadHeaderTimeout: 500 * time.Millisecond, IdleTimeout: time.Second}, robustRoutes)
	rc := dialRaw(t, addr)
	rc.send("POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\npartial")
	start := time.Now()
	_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, _ = io.ReadAll(rc.br)
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("stalled upload held the connection for %v", d)
	}
}

// A client that pipelines requests for large answers and never reads cannot grow
// the server's memory without bound.
func TestH1PipelinedNonReaderBounded(t *testing.T) {
	_, addr := startServer(t, Config{}, robustRoutes)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sent atomic.Int64
	go func() {
		req := []byte("GET /1m HTTP/1.1\r\nHost: x\r\n\r\n")
		for i := 0; i < 500; i++ {
			if _, err := c.Write(req); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	testkit.Window(2 * time.Second) // a sleep: the window in which the heap may grow while the client pipelines without reading
	runtime.GC()
	runtime.ReadMemStats(&ms)
	growth := int64(ms.HeapInuse) - int64(before)
	t.Logf("heap grew %d MiB while the client sent %d requests for 1 MiB and read nothing", growth>>20, sent.Load())
	if growth > 128<<20 {
		t.Fatalf("heap grew %d MiB", growth>>20)
	}
}

// Use middleware may block: around the built-in 404 it must not run on the loop.
// With one event loop, /fast on another connection answers while the
// middleware still blocks; run inline, /fast would wait for it and the read
// would fail on its deadline.
func TestUseMiddlewareNotInlineFor404(t *testing.T) {
	t.Parallel()
	release, entered := make(chan struct{}), make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	_, addr := startServer(t, Config{EventLoops: 1}, func(s *Server) {
		s.Use(func(next HandlerFunc) HandlerFunc {
			return func(c *Context) error {
				if c.Path() == "/missing" {
					close(entered)
					<-release
				}
				return next(c)
			}
		})
		s.GET("/fast", func(c *Context) error { return c.String(200, "ok") }).Inline()
	})
	t.Cleanup(free) // before the server's shutdown, which waits for the middleware
	slow := dialRaw(t, addr)
	slow.send("GET /missing HTTP/1.1\r\nHost: x\r\n\r\n")
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the middleware never ran for /missing")
	}
	fast := dialRaw(t, addr)
	_ = fast.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	fast.send("GET /fast HTTP/1.1\r\nHost: x\r\n\r\n")
	body, err := readResponseErr(fast, "GET")
	free()
	if err != nil || body != "ok" {
		t.Fatalf("/fast while a 404 ran blocking middleware: %q, %v", body, err)
	}
	if resp := slow.readResponse("GET"); resp.StatusCode != 404 {
		t.Fatal(resp.Status)
	}
}
