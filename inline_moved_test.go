package celeris_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/middleware/static"
)

// movedEngines are the engines the inline-output tests run on.
var movedEngines = []struct {
	name   string
	engine celeris.Engine
}{{name: "gnet", engine: celeris.EngineGnet}, {name: "std", engine: celeris.EngineStd}}

// heapInuse is the process's live heap after a collection.
func heapInuse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// movedGrowthMax is what a non-reading client may make the process's heap grow
// by (the server's output bounds, the h2 client's 4 MiB stream window): a
// response queued whole grows it by its 64 MiB.
const movedGrowthMax = 16 << 20

// TestInlineLargeResponseMovesToWorker: an Inline route answering with a 64 MiB
// Blob, a 64 MiB File, or the static middleware's 64 MiB file, to a client that
// reads nothing, does not have its response queued whole: the heap grows by
// less than movedGrowthMax (the response is sent from a worker, within the
// output bound). The client then reads the exact bytes; on HTTP/1.1 a
// pipelined request after it is answered next, in order; on HTTP/2 another
// stream of the connection is answered while the first waits; a middleware
// sees the status and length as sent. Both engines.
func TestInlineLargeResponseMovesToWorker(t *testing.T) {
	const size = 64 << 20
	body := make([]byte, size)
	for i := range body {
		body[i] = byte(i*7 + i>>16)
	}
	dir := t.TempDir()
	name := filepath.Join(dir, "big.bin")
	if err := os.WriteFile(name, body, 0o600); err != nil {
		t.Fatal(err)
	}
	// seen is what a middleware (a logger) sees after the handler returned:
	// the response as it will be sent.
	type seen struct {
		status int
		bytes  int64
	}
	seenc := make(chan seen, 4)
	observe := func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			err := next(c)
			select { // never block the loop, even after a failed subtest
			case seenc <- seen{status: c.StatusCode(), bytes: c.BytesWritten()}:
			default:
			}
			return err
		}
	}
	check := func(t *testing.T) {
		t.Helper()
		select {
		case got := <-seenc:
			if got.status != http.StatusOK || got.bytes != size {
				t.Errorf("middleware saw status %d, %d bytes; want 200, %d", got.status, got.bytes, size)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the middleware saw no response")
		}
	}
	drain := func() {
		for len(seenc) > 0 {
			<-seenc
		}
	}
	for _, e := range movedEngines {
		_, addr := celeristest.Serve(t, celeris.Config{Engine: e.engine}, func(s *celeris.Server) {
			s.GET("/blob", func(c *celeris.Context) error {
				return c.Blob(http.StatusOK, "application/octet-stream", body)
			}, observe).Inline()
			s.GET("/file", func(c *celeris.Context) error { return c.File(name) }, observe).Inline()
			s.GET("/static/*filepath", static.New(static.Config{FS: os.DirFS(dir)}), observe).Inline()
			s.GET("/small", func(c *celeris.Context) error { return c.String(http.StatusOK, "small") }).Inline()
		})
		for _, route := range []string{"/blob", "/file", "/static/big.bin"} {
			t.Run(e.name+route+"/h1", func(t *testing.T) { drain(); movedH1(t, addr, route, body); check(t) })
			t.Run(e.name+route+"/h2c", func(t *testing.T) { drain(); movedH2(t, addr, route, body); check(t) })
		}
	}
}

// checkUnreadHeap checks that the heap grows by movedGrowthMax at most over
// base while a client reads nothing for a while.
func checkUnreadHeap(t *testing.T, base int64) {
	t.Helper()
	testkit.Window(400 * time.Millisecond) // a sleep: the window in which the heap may grow while the client reads nothing; growth has no event, its absence even less
	grown := heapInuse() - base
	t.Logf("heap growth while the client reads nothing: %.1f MiB", float64(grown)/(1<<20))
	if grown > movedGrowthMax {
		t.Fatalf("the heap grew by %.1f MiB for a client that reads nothing: the inline response was queued whole", float64(grown)/(1<<20))
	}
}

// movedH1 asks for route and, pipelined after it, /small, reads nothing for a
// while, then reads both answers.
func movedH1(t *testing.T, addr, route string, want []byte) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	base := heapInuse()
	if _, err := io.WriteString(nc, "GET "+route+" HTTP/1.1\r\nHost: x\r\n\r\nGET /small HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	checkUnreadHeap(t, base)
	br := bufio.NewReaderSize(nc, 64<<10)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(want)) {
		t.Fatalf("status %d, Content-Length %d; want 200, %d", resp.StatusCode, resp.ContentLength, len(want))
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("after %d bytes: %v", len(got), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, not the %d sent", len(got), len(want))
	}
	resp, err = http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	if err != nil {
		t.Fatalf("the pipelined request after it: %v", err)
	}
	small, _ := io.ReadAll(resp.Body)
	if string(small) != "small" {
		t.Fatalf("the pipelined request after it got %q", small)
	}
}

// h2cTransport speaks HTTP/2 with prior knowledge over plain TCP
// (golang.org/x/net/http2), one connection for every request.
func h2cTransport() *http2.Transport {
	return &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
}

// movedH2 asks for route, reads nothing of its body for a while, asks for
// /small on the same connection meanwhile, then reads the body.
func movedH2(t *testing.T, addr, route string, want []byte) {
	tr := h2cTransport()
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	// Settle the connection first (SETTINGS and their acknowledgements): a
	// request that arrives while the connection's output waits runs on a
	// worker anyway, and this one must run inline.
	if r, err := client.Get("http://" + addr + "/small"); err != nil {
		t.Fatal(err)
	} else {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	base := heapInuse()
	resp, err := client.Get("http://" + addr + route)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(want)) {
		t.Fatalf("status %d, content-length %d; want 200, %d", resp.StatusCode, resp.ContentLength, len(want))
	}
	checkUnreadHeap(t, base)
	start := time.Now()
	r2, err := client.Get("http://" + addr + "/small")
	if err != nil {
		t.Fatalf("another stream while the first waits: %v", err)
	}
	small, _ := io.ReadAll(r2.Body)
	r2.Body.Close()
	if string(small) != "small" || time.Since(start) > 2*time.Second {
		t.Fatalf("another stream while the first waits got %q after %v", small, time.Since(start))
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("after %d bytes: %v", len(got), err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("got %d bytes, not the %d sent", len(got), len(want))
	}
}

// syncBuffer is a log sink several goroutines write to.
type syncBuffer = testkit.Log

// TestInlineStreamCap: an Inline route that streams (1 KiB writes, flushed)
// queues at most InlineStreamMax bytes: the Write that would pass it fails
// with ErrInlineOutput, the response is broken off (HTTP/1.1: no last chunk,
// the connection closes; HTTP/2: RST_STREAM INTERNAL_ERROR, the connection
// serves on), and the event is logged once per response. Both engines.
func TestInlineStreamCap(t *testing.T) {
	for _, e := range movedEngines {
		t.Run(e.name, func(t *testing.T) {
			var logs syncBuffer
			logger := slog.New(slog.NewTextHandler(&logs, nil))
			results := make(chan error, 4)
			written := make(chan int, 4)
			_, addr := celeristest.Serve(t, celeris.Config{Engine: e.engine, Logger: logger}, func(s *celeris.Server) {
				s.GET("/stream", func(c *celeris.Context) error {
					w, err := c.Stream(http.StatusOK, "text/plain")
					if err != nil {
						return err
					}
					chunk := bytes.Repeat([]byte("s"), 1<<10)
					n := 0
					for i := 0; i < 2048 && err == nil; i++ { // 2 MiB
						var k int
						k, err = w.Write(chunk)
						n += k
						if err == nil {
							err = w.Flush()
						}
					}
					written <- n
					results <- err
					return nil
				}).Inline()
				s.GET("/small", func(c *celeris.Context) error { return c.String(http.StatusOK, "small") }).Inline()
			})
			check := func(t *testing.T) {
				t.Helper()
				var n int
				var err error
				select {
				case n = <-written:
					err = <-results
				case <-time.After(10 * time.Second):
					t.Fatal("the handler did not return")
				}
				if n != celeris.InlineStreamMax {
					t.Errorf("the handler wrote %d bytes, want InlineStreamMax (%d)", n, celeris.InlineStreamMax)
				}
				if !errors.Is(err, celeris.ErrInlineOutput) {
					t.Fatalf("the Write past InlineStreamMax returned %v, want ErrInlineOutput", err)
				}
			}
			t.Run("h1", func(t *testing.T) {
				before := strings.Count(logs.String(), "InlineStreamMax")
				nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				defer nc.Close()
				_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
				_, _ = io.WriteString(nc, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
				br := bufio.NewReader(nc)
				resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(resp.Body)
				if err == nil {
					t.Fatalf("the broken-off response read as complete (%d bytes)", len(got))
				}
				if len(got) > celeris.InlineStreamMax {
					t.Fatalf("got %d bytes, more than InlineStreamMax", len(got))
				}
				if _, err := br.ReadByte(); err == nil {
					t.Fatal("the connection stayed open after the broken-off response")
				}
				check(t)
				if n := strings.Count(logs.String(), "InlineStreamMax") - before; n != 1 {
					t.Fatalf("logged %d times, want once:\n%s", n, logs.String())
				}
			})
			t.Run("h2c", func(t *testing.T) {
				before := strings.Count(logs.String(), "InlineStreamMax")
				tr := h2cTransport()
				defer tr.CloseIdleConnections()
				client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
				resp, err := client.Get("http://" + addr + "/stream")
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				var se http2.StreamError
				if !errors.As(err, &se) || se.Code != http2.ErrCodeInternal {
					t.Fatalf("reading the body: %v after %d bytes, want RST_STREAM INTERNAL_ERROR", err, len(got))
				}
				check(t)
				r2, err := client.Get("http://" + addr + "/small")
				if err != nil {
					t.Fatalf("the connection after the reset: %v", err)
				}
				small, _ := io.ReadAll(r2.Body)
				r2.Body.Close()
				if string(small) != "small" {
					t.Fatalf("the connection after the reset answered %q", small)
				}
				if n := strings.Count(logs.String(), "InlineStreamMax") - before; n != 1 {
					t.Fatalf("logged %d times, want once:\n%s", n, logs.String())
				}
			})
		})
	}
}
