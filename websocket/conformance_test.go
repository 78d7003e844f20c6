package websocket_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/ws"
)

// RFC 9110 §5.3: repeated lines of a list field are one value, so Connection
// split over two lines ("keep-alive", then "Upgrade") asks for the upgrade as the
// one-line form does.
func TestHandshakeConnectionSplit(t *testing.T) {
	addr := startServer(t, echoRoutes)
	for _, tc := range []struct {
		name  string
		field string
	}{
		{name: "two lines", field: "Connection: keep-alive\r\nConnection: Upgrade\r\n"},
		{name: "upgrade first", field: "Connection: Upgrade\r\nConnection: keep-alive\r\n"},
		{name: "one line", field: "Connection: keep-alive, Upgrade\r\n"},
		{name: "upgrade split", field: "Connection: Upgrade\r\nUpgrade: foo/2\r\nUpgrade: websocket\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
			upgrade := "Upgrade: websocket\r\n"
			if strings.Contains(tc.field, "Upgrade: ") {
				upgrade = ""
			}
			io.WriteString(nc, "GET /events HTTP/1.1\r\nHost: x\r\n"+upgrade+tc.field+
				"Sec-WebSocket-Key: "+testKey+"\r\nSec-WebSocket-Version: 13\r\n\r\n")
			br := bufio.NewReader(nc)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != 101 {
				t.Fatalf("status %d, want 101", resp.StatusCode)
			}
			c := &client{t: t, nc: nc, br: br}
			c.send(true, ws.OpText, []byte("hi"))
			if h, p := c.read(); h.Op != ws.OpText || string(p) != "hi" {
				t.Fatalf("echo: op %d %q", h.Op, p)
			}
		})
	}
}

// A data frame followed at once by Close (in the same write, or back to back):
// the message reaches the application and its echo goes out before the close
// reply (RFC 6455 §1.4: after sending a Close frame the peer sends no more data,
// but what it sent before still counts; the Autobahn suite's case 7.1.1).
func TestMessageThenClose(t *testing.T) {
	addr := startServer(t, echoRoutes)
	frame := func(op ws.Opcode, p []byte) []byte {
		key := [4]byte{9, 8, 7, 6}
		b := ws.AppendHeader(nil, true, false, op, len(p), true, key)
		start := len(b)
		b = append(b, p...)
		ws.Mask(key, 0, b[start:])
		return b
	}
	text := frame(ws.OpText, []byte("Hello World!"))
	closeFrame := frame(ws.OpClose, []byte{0x03, 0xe8})
	for _, path := range []string{"/handler", "/events", "/inline"} {
		for _, mode := range []string{"one write", "two writes"} {
			t.Run(path+" "+mode, func(t *testing.T) {
				c, resp := dial(t, addr, path)
				if resp.StatusCode != 101 {
					t.Fatalf("handshake %d", resp.StatusCode)
				}
				if mode == "one write" {
					c.nc.Write(append(append([]byte{}, text...), closeFrame...))
				} else {
					c.nc.Write(text)
					c.nc.Write(closeFrame)
				}
				h, p := c.read()
				if h.Op != ws.OpText || string(p) != "Hello World!" {
					t.Fatalf("first frame: op %d %q, want the echo", h.Op, p)
				}
				h, p = c.read()
				if h.Op != ws.OpClose || len(p) < 2 || int(p[0])<<8|int(p[1]) != 1000 {
					t.Fatalf("second frame: op %d % x, want close 1000", h.Op, p)
				}
				if _, err := c.br.ReadByte(); err != io.EOF {
					t.Fatalf("after the close handshake: %v, want EOF", err)
				}
			})
		}
	}
}
