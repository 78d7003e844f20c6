package celeris

import (
	"bytes"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2raw"
)

// TestH2HostValidated: over the real engine, an HTTP/2 request whose Host is not
// uri-host [ ":" port ] (RFC 9113 §8.3.1, RFC 3986 §3.2) is malformed: it gets
// 400 before any handler runs, and a valid Host beside :authority is served.
func TestH2HostValidated(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, testRoutes)
	for _, host := range []string{"a b", "user@example.com", "example.com:8o", "ex\x7fample.com", ""} {
		status, _ := rawH2Get(t, addr, hpack.HeaderField{Name: "host", Value: host})
		if status != "400" {
			t.Errorf("Host %q: status %s, want 400", host, status)
		}
	}
	fields, err := h2raw.Get(addr, "/bench", hpack.HeaderField{Name: "host", Value: "[::1]:8080"})
	if err != nil || fields[":status"] != "200" {
		t.Fatalf("valid Host: %v %v", fields, err)
	}
}

// TestH2MadeYouResetEngine: CVE-2025-8671 over the real engine. A client opens
// streams and makes the server reset each one at once with a WINDOW_UPDATE of
// increment 0 (legal to send, a stream error to receive), while the handlers
// never return: it gets GOAWAY ENHANCE_YOUR_CALM once the reset budget is spent,
// no more than MaxConcurrentStreams handlers run at once, and another
// connection is served meanwhile. (internal/h2's socket tests cover every
// trigger.)
func TestH2MadeYouResetEngine(t *testing.T) {
	t.Parallel()
	const mcs = 8
	release := make(chan struct{})
	defer close(release)
	var running, peak atomic.Int32
	_, addr := startServer(t, Config{MaxConcurrentStreams: mcs}, func(s *Server) {
		s.GET("/stuck", func(c *Context) error {
			n := running.Add(1)
			defer running.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			<-release // ignores the stream's end, as a handler stuck in a slow call
			return c.String(200, "late")
		})
		s.GET("/fast", func(c *Context) error { return c.String(200, "fast") })
	})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	var out bytes.Buffer
	fr := http2.NewFramer(&out, nc)
	fr.AllowIllegalWrites = true // WINDOW_UPDATE increment 0
	out.WriteString(http2.ClientPreface)
	_ = fr.WriteSettings()
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for id := uint32(1); id < 600; id += 2 {
		block.Reset()
		for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", addr}, {":path", "/stuck"}} {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndStream: true, EndHeaders: true})
		_ = fr.WriteWindowUpdate(id, 0)
	}
	if _, err := nc.Write(out.Bytes()); err != nil {
		t.Fatal(err)
	}
	resets := 0
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatalf("no GOAWAY after %d resets: %v", resets, err)
		}
		if f, ok := f.(*http2.RSTStreamFrame); ok && f.ErrCode == http2.ErrCodeProtocol {
			resets++
		}
		if f, ok := f.(*http2.GoAwayFrame); ok {
			if f.ErrCode != http2.ErrCodeEnhanceYourCalm {
				t.Fatalf("GOAWAY %v", f.ErrCode)
			}
			break
		}
	}
	if resets < 100 {
		t.Fatalf("GOAWAY after %d resets", resets)
	}
	if _, err := io.Copy(io.Discard, nc); err != nil {
		t.Fatalf("connection not closed after GOAWAY: %v", err)
	}
	resp, err := h2cClient().Get("http://" + addr + "/fast")
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); resp.ProtoMajor != 2 || body != "fast" {
		t.Fatalf("second connection: %s %q", resp.Proto, body)
	}
	if p := peak.Load(); p > mcs {
		t.Fatalf("%d handlers ran at once, MaxConcurrentStreams %d", p, mcs)
	}
	t.Logf("%d streams reset before GOAWAY, at most %d handlers at once", resets, peak.Load())
}
