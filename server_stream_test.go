package celeris

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func streamRoutes(cancelled chan time.Duration) func(s *Server) {
	return func(s *Server) {
		s.POST("/count", func(c *Context) error {
			n, err := io.Copy(io.Discard, c.BodyReader())
			if err != nil {
				return err
			}
			return c.String(200, strconv.FormatInt(n, 10))
		})
		s.POST("/echo", func(c *Context) error {
			b, err := c.Body()
			if err != nil {
				return err
			}
			return c.Blob(200, "application/octet-stream", b)
		})
		s.POST("/reject", func(c *Context) error { return NewHTTPError(403, "rejected") })
		s.GET("/wait", func(c *Context) error {
			start := time.Now()
			select {
			case <-c.Context().Done():
				cancelled <- time.Since(start)
			case <-time.After(10 * time.Second):
				cancelled <- -1
			}
			return nil
		})
	}
}

func TestH1StreamedUpload(t *testing.T) {
	_, addr := startServer(t, Config{MaxRequestBodySize: 64 << 20}, streamRoutes(nil))
	body := make([]byte, 16<<20)
	_, _ = rand.Read(body)
	t.Run("content-length", func(t *testing.T) {
		resp, err := http.Post("http://"+addr+"/count", "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := bodyString(t, resp); got != strconv.Itoa(len(body)) {
			t.Fatalf("count %q", got)
		}
	})
	t.Run("chunked", func(t *testing.T) {
		// A reader without a known length makes net/http send chunked.
		resp, err := http.Post("http://"+addr+"/count", "application/octet-stream", io.MultiReader(bytes.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		if got := bodyString(t, resp); got != strconv.Itoa(len(body)) {
			t.Fatalf("count %q", got)
		}
	})
	t.Run("echo buffered", func(t *testing.T) {
		resp, err := http.Post("http://"+addr+"/echo", "application/octet-stream", bytes.NewReader(body[:3<<20]))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(got, body[:3<<20]) {
			t.Fatalf("echo mismatch: %d bytes", len(got))
		}
	})
	t.Run("over limit", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\n\r\n")
		if resp := rc.readResponse("POST"); resp.StatusCode != 413 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		rc.expectClosed()
	})
	t.Run("chunked over limit", func(t *testing.T) {
		_, addr := startServer(t, Config{MaxRequestBodySize: 1 << 10}, streamRoutes(nil))
		rc := dialRaw(t, addr)
		rc.send("POST /count HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n800\r\n" + strings.Repeat("a", 2048) + "\r\n0\r\n\r\n")
		if resp := rc.readResponse("POST"); resp.StatusCode != 413 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		rc.expectClosed()
	})
}

func TestH1ExpectContinue(t *testing.T) {
	_, addr := startServer(t, Config{}, streamRoutes(nil))
	t.Run("sent when the handler reads", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("POST /count HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
		resp := rc.readResponse("POST")
		if resp.StatusCode != 100 {
			t.Fatalf("interim status %d", resp.StatusCode)
		}
		rc.send(strings.Repeat("z", 100000))
		if resp := rc.readResponse("POST"); resp.StatusCode != 200 || bodyString(t, resp) != "100000" {
			t.Fatalf("final %d", resp.StatusCode)
		}
	})
	t.Run("final status without reading", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("POST /reject HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
		resp := rc.readResponse("POST")
		if resp.StatusCode != 403 || !resp.Close {
			t.Fatalf("status %d close %v, want 403 and close", resp.StatusCode, resp.Close)
		}
		rc.expectClosed()
	})
}

func TestH1ContextCancelledOnClientClose(t *testing.T) {
	cancelled := make(chan time.Duration, 1)
	s, addr := startServer(t, Config{}, streamRoutes(cancelled))
	rc := dialRaw(t, addr)
	rc.send("GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	waitFor(t, "/wait to run", func() bool { return s.Stats().ActiveRequests == 1 })
	closedAt := time.Now()
	rc.c.Close()
	select {
	case d := <-cancelled:
		if d < 0 {
			t.Fatal("context never cancelled")
		}
		// /wait waits 10 s for its context; half of that tells "cancelled
		// when the client left" from "ran out its wait", however loaded.
		if since := time.Since(closedAt); since > 5*time.Second {
			t.Errorf("cancelled %v after the client closed, want well under the handler's 10 s", since)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("handler did not return")
	}
}

func TestH1ChunkedTrailers(t *testing.T) {
	got := make(chan string, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.POST("/t", func(c *Context) error {
			if _, err := io.Copy(io.Discard, c.BodyReader()); err != nil {
				return err
			}
			var b strings.Builder
			c.VisitTrailers(func(n, v string) { fmt.Fprintf(&b, "%s=%s;", n, v) })
			got <- b.String()
			return c.NoContent(204)
		})
	})
	rc := dialRaw(t, addr)
	rc.send("POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-Sum: 42\r\n\r\n")
	if resp := rc.readResponse("POST"); resp.StatusCode != 204 {
		t.Fatal(resp.Status)
	}
	if g := <-got; g != "X-Sum=42;" {
		t.Fatalf("trailers %q", g)
	}
}
