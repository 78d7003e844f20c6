package websocket_test

import (
	"bytes"
	"compress/flate"
	"strconv"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/ws"
	"github.com/celeris-dev/celeris/websocket"
)

func deflateRoutes(s *celeris.Server) {
	echo := websocket.Callbacks{OnMessage: func(c *websocket.Conn, t websocket.MessageType, msg []byte) error {
		return c.WriteMessage(t, msg)
	}}
	s.GET("/takeover", websocket.Events(&websocket.Config{Compression: true, ContextTakeover: true, MaxMessageSize: 1 << 20}, echo))
	s.GET("/alone", websocket.Events(&websocket.Config{Compression: true, MaxMessageSize: 1 << 20}, echo))
	s.GET("/off", websocket.Events(nil, echo))
}

// compressor is a client's permessage-deflate with context takeover.
type compressor struct {
	buf bytes.Buffer
	fw  *flate.Writer
}

func (c *compressor) message(p []byte) []byte {
	if c.fw == nil {
		c.fw, _ = flate.NewWriter(&c.buf, flate.BestSpeed)
	}
	c.buf.Reset()
	c.fw.Write(p)
	c.fw.Flush()
	return append([]byte(nil), bytes.TrimSuffix(c.buf.Bytes(), []byte{0, 0, 0xff, 0xff})...)
}

func (c *client) sendCompressed(op ws.Opcode, comp []byte) {
	c.t.Helper()
	key := [4]byte{5, 6, 7, 8}
	b := ws.AppendHeader(nil, true, true, op, len(comp), true, key)
	start := len(b)
	b = append(b, comp...)
	ws.Mask(key, 0, b[start:])
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// TestPermessageDeflate: permessage-deflate (RFC 7692) over a real socket, with
// and without context takeover: the negotiated parameters, compressed messages
// both ways (RSV1), a client that keeps its window across messages, invalid
// compressed data (1007), a compressed bomb (1009), and no extension when the
// route does not enable it.
func TestPermessageDeflate(t *testing.T) {
	addr := startServer(t, deflateRoutes)
	offer := "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"
	// A message that does not repeat itself, sent twice: with takeover the second
	// one is a back-reference into the first.
	var sb strings.Builder
	for i := 0; i < 400; i++ {
		sb.WriteString(strconv.Itoa(i * 7919 % 10007))
		sb.WriteByte(' ')
	}
	msgs := []string{sb.String(), sb.String(), "short", ""}
	for _, tc := range []struct {
		path, resp string
		takeover   bool
	}{
		{path: "/takeover", resp: "permessage-deflate", takeover: true},
		{path: "/alone", resp: "permessage-deflate; server_no_context_takeover; client_no_context_takeover"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			c, resp := dial(t, addr, tc.path, offer)
			if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != tc.resp {
				t.Fatalf("extension answer %q, want %q", got, tc.resp)
			}
			c.deflate = true
			var cc compressor
			inflater := &ws.Deflate{Params: ws.DeflateParams{ClientNoContextTakeover: !tc.takeover}} // inflates the server's messages
			for i, m := range msgs {
				if !tc.takeover {
					cc = compressor{} // the server asked us to compress each message alone
				}
				c.sendCompressed(ws.OpText, cc.message([]byte(m)))
				h, p := c.read()
				if h.Op != ws.OpText || !h.RSV1 {
					t.Fatalf("message %d: op %d rsv1 %v", i, h.Op, h.RSV1)
				}
				got, err := inflater.Inflate(nil, p, 1<<20)
				if err != nil || string(got) != m {
					t.Fatalf("message %d: %v %.40q", i, err, got)
				}
				if i == 1 && tc.takeover && len(p) > len(m)/10 { // without the window: about half of len(m)
					t.Fatalf("the repeated message took %d bytes: the server's window was not kept", len(p))
				}
			}
			// Uncompressed frames are still fine.
			c.send(true, ws.OpBinary, []byte{1, 2, 3})
			if h, p := c.read(); h.Op != ws.OpBinary || !h.RSV1 {
				t.Fatalf("echo of an uncompressed message: op %d rsv1 %v %v", h.Op, h.RSV1, p)
			}
		})
	}
	t.Run("invalid data", func(t *testing.T) {
		c, _ := dial(t, addr, "/alone", offer)
		c.deflate = true
		c.sendCompressed(ws.OpBinary, []byte{0xff, 0xff, 0xff, 0xff})
		expectClose(t, c, 1007)
	})
	t.Run("invalid UTF-8 inside", func(t *testing.T) {
		c, _ := dial(t, addr, "/alone", offer)
		c.deflate = true
		var cc compressor
		c.sendCompressed(ws.OpText, cc.message([]byte("ok \xed\xa0\x80")))
		expectClose(t, c, 1007)
	})
	t.Run("bomb", func(t *testing.T) {
		c, _ := dial(t, addr, "/alone", offer)
		c.deflate = true
		var cc compressor
		c.sendCompressed(ws.OpBinary, cc.message(make([]byte, 8<<20))) // 8 MiB of zeros, ~8 KiB compressed
		expectClose(t, c, 1009)
	})
	t.Run("not enabled", func(t *testing.T) {
		c, resp := dial(t, addr, "/off", offer)
		if got := resp.Header.Get("Sec-WebSocket-Extensions"); got != "" {
			t.Fatalf("extension %q on a route without compression", got)
		}
		c.send(true, ws.OpText, []byte("x"))
		if h, _ := c.read(); h.RSV1 {
			t.Fatal("compressed answer without the extension")
		}
	})
}
