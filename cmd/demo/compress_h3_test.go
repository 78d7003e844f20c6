package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	brrr "github.com/molecule-man/go-brrr"
	"github.com/quic-go/quic-go/http3"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/compress"
	celerish3 "github.com/celeris-dev/celeris/http3"
	"github.com/celeris-dev/celeris/internal/demo"
	mwcompress "github.com/celeris-dev/celeris/middleware/compress"
)

// TestCompressedSSEPerFlushHTTP3: over HTTP/3 (quic-go's client), an SSE
// stream encoded with zstd or brotli reaches the client one decodable event at
// a time: the handler sends its second event only after the client decoded
// the first. The route is added to the demo's server for the test.
func TestCompressedSSEPerFlushHTTP3(t *testing.T) {
	s, err := demo.NewTLSServer("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	decoded := make(chan struct{}, 1)
	s.GET("/test/sse", func(c *celeris.Context) error {
		w, err := c.SSE()
		if err != nil {
			return err
		}
		if err := w.Send(celeris.Event{Data: "first event"}); err != nil {
			return err
		}
		select {
		case <-decoded:
		case <-time.After(10 * time.Second):
			return nil // the client saw nothing: it fails
		case <-c.Context().Done():
			return nil
		}
		return w.Send(celeris.Event{Data: "second event"})
	}, mwcompress.New(mwcompress.Config{Encoders: []mwcompress.Encoder{compress.Zstd(0), compress.Brotli(0)}}))
	h3 := celerish3.Enable(s, celerish3.Config{})
	celeristest.Start(t, s)
	udp, err := h3.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableCompression: true}
	defer tr.Close()
	cl := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	const ev1, ev2 = "data: first event\n\n", "data: second event\n\n"
	for _, coding := range []string{"zstd", "br"} {
		t.Run(coding, func(t *testing.T) {
			req, _ := http.NewRequest("GET", "https://"+udp.String()+"/test/sse", nil)
			req.Header.Set("Accept-Encoding", coding)
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.ProtoMajor != 3 || resp.Header.Get("Content-Encoding") != coding {
				t.Fatalf("%s, Content-Encoding %q", resp.Proto, resp.Header.Get("Content-Encoding"))
			}
			var r io.Reader
			if coding == "zstd" {
				zr, err := zstd.NewReader(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				defer zr.Close()
				r = zr
			} else {
				r = brrr.NewReader(resp.Body)
			}
			got := make([]byte, len(ev1))
			if _, err := io.ReadFull(r, got); err != nil || string(got) != ev1 {
				t.Fatalf("first event: %q, %v", got, err)
			}
			decoded <- struct{}{}
			if rest, err := io.ReadAll(r); err != nil || string(rest) != ev2 {
				t.Fatalf("second event: %q, %v", rest, err)
			}
		})
	}
}
