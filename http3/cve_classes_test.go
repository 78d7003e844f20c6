package celerish3

import (
	"fmt"
	"testing"
)

// TestWireFrameTypes0x0aTo0x0f: HTTP/3's side of the core module's
// TestCVEUnknownFrameTypes. On a request stream, frame types 0x0a-0x0f are
// unknown to HTTP/3 and ignored (RFC 9114 §9: "implementations MUST ignore
// unknown or unsupported values"), the request after them is served; 0x0d is
// MAX_PUSH_ID, a control frame, which on a request stream is a connection
// error H3_FRAME_UNEXPECTED (§7.2.7).
func TestWireFrameTypes0x0aTo0x0f(t *testing.T) {
	addr := wireServer(t, Config{})
	for typ := uint64(0x0a); typ <= 0x0f; typ++ {
		t.Run(fmt.Sprintf("0x%02x", typ), func(t *testing.T) {
			c := dialRaw(t, addr)
			c.control()
			req := append(frameBytes(typ, []byte{0x01}), getHeaders...)
			if typ == frameMaxPushID {
				go func() { _, _ = c.request(req, true) }()
				if code := c.closedWith(); code != ErrCodeFrameUnexpected {
					t.Fatalf("closed with %v, want H3_FRAME_UNEXPECTED", code)
				}
				return
			}
			resp, err := c.request(req, true)
			if err != nil || status(t, resp) != "200" {
				t.Fatalf("%q %v", resp, err)
			}
		})
	}
}
