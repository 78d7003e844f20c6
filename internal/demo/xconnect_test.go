package demo

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2raw"
)

// TestDemoExtendedConnect: the demo advertises SETTINGS_ENABLE_CONNECT_PROTOCOL
// (it has a native WebSocket route), opens /ws/echo by extended CONNECT (200), and
// refuses an extended CONNECT to any other route with a 4xx, never a 2xx with a
// body (RFC 9110 §9.3.6).
func TestDemoExtendedConnect(t *testing.T) {
	base := startDemo(t, true)
	nc, fr, settings, err := h2raw.Open(strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if settings[http2.SettingEnableConnectProtocol] != 1 {
		t.Fatal("SETTINGS_ENABLE_CONNECT_PROTOCOL not advertised")
	}
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	dec := hpack.NewDecoder(4096, nil)
	for i, path := range []string{"/bench", "/json", "/nethttp/hello", "/ws/echo"} {
		id := uint32(1 + 2*i)
		hb.Reset()
		for _, kv := range [][2]string{{":method", "CONNECT"}, {":protocol", "websocket"}, {":scheme", "http"},
			{":path", path}, {":authority", "localhost"}, {"sec-websocket-version", "13"}} {
			enc.WriteField(hpack.HeaderField{Name: kv[0], Value: kv[1]})
		}
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true})
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			h, ok := f.(*http2.HeadersFrame)
			if !ok || h.StreamID != id {
				continue
			}
			fs, _ := dec.DecodeFull(h.HeaderBlockFragment())
			status := ""
			for _, hf := range fs {
				if hf.Name == ":status" {
					status = hf.Value
				}
			}
			if path == "/ws/echo" {
				if status != "200" {
					t.Errorf("%s: %s, want 200", path, status)
				}
			} else if status == "" || status[0] != '4' {
				t.Errorf("%s: %s, want a 4xx", path, status)
			}
			break
		}
	}
}
