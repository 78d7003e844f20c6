//go:build !race

package celeris_test

import (
	"io"
	"net/http"
	"runtime"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
)

// TestStdEngineStreamedDownloadReusesBuffers: on the std engine, 64 MiB
// responses streamed in 64 KiB writes to a client that reads as fast as it can
// reuse the connection's output buffers: three of them (server and Go's client in
// this process) allocate 0-2 MB, the occasional regrowth of a buffer the
// protocol and the engine trade, not a share of the body. (A batch the socket
// took in part once went to the writer without the bytes written before it, so
// buffers came back smaller and regrew: 5-20 MB for the three.)
func TestStdEngineStreamedDownloadReusesBuffers(t *testing.T) {
	const size, chunk = 64 << 20, 64 << 10
	zeros := make([]byte, chunk)
	_, addr := celeristest.Serve(t, celeris.Config{Engine: celeris.EngineStd}, func(s *celeris.Server) {
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
	// No runtime.GC here: it would empty sync.Pools (gnet keeps its
	// outbound buffers in one) and count their refill.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 3 {
		get()
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d KB allocated for 3 downloads of %d MiB", alloc>>10, size>>20)
	if alloc > 3<<20 {
		t.Errorf("%d KB allocated for 3 downloads of %d MiB, want under 3 MiB: output buffers are not reused", alloc>>10, size>>20)
	}
}
