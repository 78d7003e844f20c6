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

// TestStdEngineStreamedDownloadReusesBuffers: on the std engine, a 32 MiB
// response streamed in 64 KiB writes to a client that reads as fast as it can
// reuses the connection's output buffers: the whole exchange (server and Go's
// client in this process) allocates a few KB, not a share of the body. (A batch
// the socket took in part once went to the writer without the bytes written
// before it, so buffers came back smaller and regrew: 0.7-4.1 MB per 32 MiB.)
func TestStdEngineStreamedDownloadReusesBuffers(t *testing.T) {
	const size, chunk = 32 << 20, 64 << 10
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
	get() // buffers grown, connection kept
	// No runtime.GC here: it would empty sync.Pools (gnet keeps its
	// outbound buffers in one) and count their refill.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	get()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%d KB allocated for a %d MiB download", alloc>>10, size>>20)
	if alloc > 256<<10 {
		t.Errorf("%d KB allocated for a %d MiB download, want under 256 KB: output buffers are not reused", alloc>>10, size>>20)
	}
}
