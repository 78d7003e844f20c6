package compress_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/h2raw"
	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/middleware/compress"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

// TestInlineLargeBodyKeepsItsBuffer: on an Inline route a compressed body over
// 64 KiB is sent from a worker after the handler returned (Context.Pending), so
// the middleware must not give its buffer back to the pool before then: the
// next responses, compressed into a reused buffer, would overwrite it. A client
// that reads nothing yet gets its first answer intact after later requests
// were compressed.
func TestInlineLargeBodyKeepsItsBuffer(t *testing.T) {
	const size = 400 << 10 // random: compresses to about its own size, in a buffer the pool keeps (up to 1 MiB)
	bodies := map[string][]byte{}
	for _, k := range []string{"a", "b"} {
		r := rand.New(rand.NewPCG(uint64(k[0]), 1))
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		bodies[k] = b
	}
	_, addr := mwtest.StartConfig(t, celeris.Config{EventLoops: 1}, func(s *celeris.Server) {
		s.GET("/:k", func(c *celeris.Context) error {
			return c.Blob(http.StatusOK, "text/plain", bodies[c.Param("k")])
		}, compress.New(compress.Config{})).Inline()
	})
	// An HTTP/2 client that grants no window: the worker sending the first
	// answer queues 256 KiB of it and waits, the rest still in the
	// middleware's buffer, while the other answers are compressed.
	nc, fr, _, err := h2raw.OpenWith(addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	if err := h2raw.WriteRequest(fr, 1, http.MethodGet, "x", "/a", true, hpack.HeaderField{Name: "accept-encoding", Value: "gzip"}); err != nil {
		t.Fatal(err)
	}
	testkit.Wait(t, "the first answer queued behind the client's window",
		testkit.Parked("celeris.(*Context).writeMoved", "h2.(*stream).Write"))
	client := mwtest.Client(t)
	for range 8 {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/b", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	_ = fr.WriteWindowUpdate(0, 1<<30)
	_ = fr.WriteWindowUpdate(1, 1<<30)
	var gz []byte
	for ended := false; !ended; {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(gz), err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				_ = fr.WriteSettingsAck()
			}
		case *http2.DataFrame:
			gz = append(gz, f.Data()...)
			ended = f.StreamEnded()
		case *http2.RSTStreamFrame, *http2.GoAwayFrame:
			t.Fatalf("%v", f)
		}
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("the first answer is corrupt: %v", err)
	}
	if !bytes.Equal(got, bodies["a"]) {
		t.Fatal("the first answer is not the body sent: its buffer was reused")
	}
}
