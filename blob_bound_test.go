package celeris

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestBlobLargeBodyBackPressure: Blob with a body far larger than the output
// bound (32 MiB) to a client that does not read yet blocks the handler instead of
// queueing the body whole: Blob has not returned while the client waits, and
// returns once the client read it all; the client gets the exact bytes with their
// Content-Length. The handler then changes its slice, which the answer no longer
// references.
func TestBlobLargeBodyBackPressure(t *testing.T) {
	const size = 32 << 20
	body := make([]byte, size)
	for i := range body {
		body[i] = byte(i * 7)
	}
	want := bytes.Clone(body)
	returned := make(chan error, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/big", func(c *Context) error {
			err := c.Blob(http.StatusOK, "application/octet-stream", body)
			clear(body) // Blob returned: b is the caller's again
			returned <- err
			return err
		})
	})
	forEachProto(t, func(t *testing.T, c *http.Client, proto string) {
		copy(body, want)
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
