//go:build !race

package celeris_test

import (
	"io"
	"net/http"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
)

// TestStreamedDownloadReusesBuffers: on each engine, 64 MiB responses streamed
// in 64 KiB writes to a client that reads as fast as it can reuse the
// connection's output buffers. Three of them (server and Go's client in this
// process, no collection) allocate 13 KB-1.1 MB on the std engine and 15 KB-2.6
// MB on gnet (2026-11-28, 26 runs each, 10 of them beside a build): the occasional regrowth of a buffer
// the h1 hand-off and the engine trade, and on gnet its own pool's buffers for
// what the socket did not take, never a share of the body (768 hand-offs of
// 256 KiB: one allocation each would be 192 MB). On the std engine a batch the
// socket took in part once went to the writer without the bytes written before
// it, so buffers came back smaller and regrew: 5-20 MB for the three.
func TestStreamedDownloadReusesBuffers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		engine celeris.Engine
		bound  uint64
	}{
		{"std", celeris.EngineStd, 3 << 20},
		{"gnet", celeris.EngineGnet, 8 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.engine == celeris.EngineGnet && runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
				t.Skip("gnet serves on Linux and macOS")
			}
			testStreamedDownloadReusesBuffers(t, tc.engine, tc.bound)
		})
	}
}

func testStreamedDownloadReusesBuffers(t *testing.T, engine celeris.Engine, bound uint64) {
	const size, chunk = 64 << 20, 64 << 10
	zeros := make([]byte, chunk)
	_, addr := celeristest.Serve(t, celeris.Config{Engine: engine}, func(s *celeris.Server) {
		s.GET("/d", func(c *celeris.Context) error {
			w, err := c.StreamLength(http.StatusOK, "application/octet-stream", size)
			if err != nil {
				return err
			}
			for n := size; n > 0; n -= chunk {
				if _, err := w.Write(zeros); err != nil {
					return err
				}
			}
			return nil
		})
	})
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	get := func() {
		resp, err := client.Get("http://" + addr + "/d")
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != size {
			t.Fatalf("read %d bytes, %v; want %d", n, err, size)
		}
	}
	// The buffers the protocol and the engine trade grow during the first
	// answers (to what a hand-off holds) and then keep their size.
	for range 2 {
		get()
	}
	// No collection in the window: one empties sync.Pools (gnet keeps its
	// outbound buffers in one, 1-3 MB refilled after a collection), which
	// says nothing of whether Celeris reuses its own buffers.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 3 {
		get()
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d KB allocated for 3 downloads of %d MiB", alloc>>10, size>>20)
	if alloc > bound {
		t.Errorf("%d KB allocated for 3 downloads of %d MiB, want under %d MiB: output buffers are not reused", alloc>>10, size>>20, bound>>20)
	}
}
