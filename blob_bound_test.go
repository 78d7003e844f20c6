package celeris

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h2raw"
	"github.com/celeris-dev/celeris/internal/testkit"
	"golang.org/x/net/http2"
)

// TestBlobLargeBodyBackPressure: Blob with a body far larger than the output
// bound (32 MiB) to a client that does not read yet blocks the handler instead of
// queueing the body whole: Blob has not returned while the client waits, and
// returns once the client read it all; the client gets the exact bytes with their
// Content-Length. The handler then changes its slice, which the answer no longer
// references.
func TestBlobLargeBodyBackPressure(t *testing.T) {
	const size = 32 << 20
	want := make([]byte, size)
	for i := range want {
		want[i] = byte(i * 7)
	}
	returned := make(chan error, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/big", func(c *Context) error {
			body := bytes.Clone(want)
			err := c.Blob(http.StatusOK, "application/octet-stream", body)
			clear(body) // Blob returned: b is the caller's again
			returned <- err
			return err
		})
	})
	forEachProto(t, func(t *testing.T, c *http.Client, proto string) {
		resp, err := c.Get("http://" + addr + "/big")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		wantProto(t, resp, proto)
		if resp.ContentLength != size || resp.Header.Get("Content-Length") != strconv.Itoa(size) && proto == "h1" {
			t.Fatalf("Content-Length %d (%q), want %d", resp.ContentLength, resp.Header.Get("Content-Length"), size)
		}
		select {
		case err := <-returned:
			t.Fatalf("Blob of %d MiB returned (%v) while the client read nothing: the body was queued whole", size>>20, err)
		case <-time.After(300 * time.Millisecond):
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("got %d bytes, not the %d sent", len(got), len(want))
		}
		select {
		case err := <-returned:
			if err != nil {
				t.Fatalf("Blob: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Blob did not return after the client read the body")
		}
	})
}

// TestH2InlineRouteWhileOutputWaits: an inline route's large Blob on an HTTP/2
// connection whose output waits (here for flow-control window: the client
// grants none) is never queued whole. The first request's body is recorded and
// sent from a worker (the route's response moves, LoopWriter); the second,
// arriving while the first waits for window, runs on a worker or moves the
// same way. Either way the server holds neither 16 MiB body: its heap grows by
// less than one body while no window is granted, and both arrive whole once it
// is.
func TestH2InlineRouteWhileOutputWaits(t *testing.T) {
	if raceEnabled {
		t.Skip("heap figures mean nothing under the race detector")
	}
	const size = 16 << 20
	body := bytes.Repeat([]byte("i"), size)
	returned := make(chan struct{}, 4)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/inlinebig", func(c *Context) error {
			err := c.Blob(http.StatusOK, "application/octet-stream", body)
			returned <- struct{}{}
			return err
		}).Inline()
	})
	nc, fr, _, err := h2raw.OpenWith(addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	get := func(id uint32) {
		if err := h2raw.WriteRequest(fr, id, http.MethodGet, "x", "/inlinebig", true); err != nil {
			t.Fatal(err)
		}
	}
	base := liveHeap()
	get(1)
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("the first inline request did not run")
	}
	get(3)
	// The second handler returned (its response moved) or waits in its Blob
	// for window on a worker; a response queued whole would have returned too.
	testkit.Wait(t, "the second request to move or wait", func() bool {
		return len(returned) > 0 || testkit.Parked("(*Context).Blob", "TestH2InlineRouteWhileOutputWaits")()
	})
	grown := liveHeap() - base
	t.Logf("heap growth while no window is granted: %.1f MiB", float64(grown)/(1<<20))
	if grown > size/2 {
		t.Fatalf("the heap grew by %.1f MiB while the client granted no window: an inline response was queued whole", float64(grown)/(1<<20))
	}
	// Grant everything and read both answers to their ends.
	_ = fr.WriteWindowUpdate(0, 2*size)
	_ = fr.WriteWindowUpdate(1, size)
	_ = fr.WriteWindowUpdate(3, size)
	got := map[uint32]int{}
	for ended := 0; ended < 2; {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.DataFrame:
			got[f.StreamID] += len(f.Data())
			if f.StreamEnded() {
				ended++
			}
		case *http2.RSTStreamFrame, *http2.GoAwayFrame:
			t.Fatalf("%v", f)
		}
	}
	if got[1] != size || got[3] != size {
		t.Fatalf("got %v bytes per stream, want %d each", got, size)
	}
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("the second Blob did not return")
	}
}

// liveHeap is the heap in use after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// TestBlobLargeBodyHead: HEAD for a route answering with a large Blob gets the
// GET's Content-Length and no body, on both protocols.
func TestBlobLargeBodyHead(t *testing.T) {
	const size = 1 << 20
	body := bytes.Repeat([]byte("h"), size)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/big", func(c *Context) error {
			return c.Blob(http.StatusOK, "application/octet-stream", body)
		})
	})
	forEachProto(t, func(t *testing.T, c *http.Client, proto string) {
		resp, err := c.Head("http://" + addr + "/big")
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ContentLength != size || len(got) != 0 {
			t.Fatalf("HEAD: %d, Content-Length %d, %d body bytes", resp.StatusCode, resp.ContentLength, len(got))
		}
		resp, err = c.Get("http://" + addr + "/big") // the connection is still in step
		if err != nil {
			t.Fatal(err)
		}
		got, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Equal(got, body) {
			t.Fatalf("GET after HEAD: %d bytes", len(got))
		}
	})
}

// TestBlobLargeBodyUnderNetHTTP: a Server mounted under net/http (ServeHTTP)
// sends a large Blob with its Content-Length, and a 204 with a large Blob as a
// 204 without a body and without an error.
func TestBlobLargeBodyUnderNetHTTP(t *testing.T) {
	const size = 1 << 20
	body := bytes.Repeat([]byte("n"), size)
	errs := make(chan error, 2)
	s := New(Config{})
	s.GET("/big", func(c *Context) error {
		err := c.Blob(http.StatusOK, "application/octet-stream", body)
		errs <- err
		return err
	})
	s.GET("/none", func(c *Context) error {
		err := c.Blob(http.StatusNoContent, "", body)
		errs <- err
		return err
	})
	ts := httptest.NewServer(s)
	defer ts.Close()
	resp, err := ts.Client().Get(ts.URL + "/big")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ContentLength != size || !bytes.Equal(got, body) || <-errs != nil {
		t.Fatalf("GET /big: Content-Length %d, %d bytes", resp.ContentLength, len(got))
	}
	resp, err = ts.Client().Get(ts.URL + "/none")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := <-errs; resp.StatusCode != http.StatusNoContent || len(got) != 0 || err != nil {
		t.Fatalf("GET /none: %d, %d bytes, Blob: %v", resp.StatusCode, len(got), err)
	}
}
