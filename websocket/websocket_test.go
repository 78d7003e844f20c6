package websocket_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/internal/ws"
	"github.com/celeris-dev/celeris/websocket"
)

func startServer(t testing.TB, register func(s *celeris.Server)) string {
	t.Helper()
	_, addr := celeristest.Serve(t, celeris.Config{Engine: testEngine}, register)
	return addr
}

// testEngine: CELERIS_TEST_ENGINE=std runs these tests on the std engine (.ci/run
// does); the default is gnet on Linux.
var testEngine = celeris.Engine(os.Getenv("CELERIS_TEST_ENGINE"))

// echoRoutes serves /handler (a blocking handler) and /events (callbacks), both
// echoing every message, and /inline (callbacks behind an inline route); the
// first two and /proto serve extended CONNECT too (Route.ExtendedConnect).
func echoRoutes(s *celeris.Server) {
	s.GET("/handler", websocket.Handler(nil, func(c *websocket.Conn) {
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(mt, msg); err != nil {
				return
			}
		}
	})).ExtendedConnect()
	cb := websocket.Callbacks{OnMessage: func(c *websocket.Conn, mt websocket.MessageType, msg []byte) error {
		return c.WriteMessage(mt, msg)
	}}
	s.GET("/events", websocket.Events(nil, cb)).ExtendedConnect()
	s.GET("/inline", websocket.Events(nil, cb)).Inline()
	s.GET("/proto", websocket.Handler(&websocket.Config{Subprotocols: []string{"chat.v2", "chat.v1"}}, func(c *websocket.Conn) {
		_ = c.WriteText("subprotocol=" + c.Subprotocol())
		_, _, _ = c.ReadMessage()
	})).ExtendedConnect()
}

// client is a raw WebSocket client over TCP, built on the codec.
type client struct {
	t       testing.TB
	nc      net.Conn
	br      *bufio.Reader
	deflate bool // permessage-deflate was negotiated: RSV1 is allowed
}

const testKey = "dGhlIHNhbXBsZSBub25jZQ=="

func dial(t testing.TB, addr, path string, extra ...string) (*client, *http.Response) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + testKey + "\r\nSec-WebSocket-Version: 13\r\n" + strings.Join(extra, "") + "\r\n"
	if _, err := io.WriteString(nc, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &client{t: t, nc: nc, br: br}, resp
}

func (c *client) send(fin bool, op ws.Opcode, p []byte) {
	c.t.Helper()
	key := [4]byte{1, 2, 3, 4}
	b := ws.AppendHeader(nil, fin, false, op, len(p), true, key)
	start := len(b)
	b = append(b, p...)
	ws.Mask(key, 0, b[start:])
	if _, err := c.nc.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

// read reads one frame from the server.
func (c *client) read() (ws.Header, []byte) {
	c.t.Helper()
	var hb []byte
	var h ws.Header
	for {
		b, err := c.br.ReadByte()
		if err != nil {
			c.t.Fatalf("reading a frame: %v", err)
		}
		hb = append(hb, b)
		n, err := ws.ParseHeader(hb, &h, false, c.deflate)
		if err == ws.ErrNeedMore {
			continue
		}
		if err != nil {
			c.t.Fatalf("server frame: %v", err)
		}
		if n != len(hb) {
			c.t.Fatalf("header length %d of %d", n, len(hb))
		}
		break
	}
	p := make([]byte, h.Length)
	if _, err := io.ReadFull(c.br, p); err != nil {
		c.t.Fatal(err)
	}
	return h, p
}

func TestHandshakeAndEcho(t *testing.T) {
	addr := startServer(t, echoRoutes)
	for _, path := range []string{"/handler", "/events", "/inline"} {
		t.Run(path, func(t *testing.T) {
			c, resp := dial(t, addr, path)
			if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Accept") != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" ||
				!strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") {
				t.Fatalf("handshake: %d %v", resp.StatusCode, resp.Header)
			}
			for i, msg := range [][]byte{[]byte("hello"), bytes.Repeat([]byte("x"), 200), bytes.Repeat([]byte("y"), 70000), nil} {
				op := ws.OpText
				if i%2 == 1 {
					op = ws.OpBinary
				}
				c.send(true, op, msg)
				h, p := c.read()
				if h.Op != op || !h.Fin || !bytes.Equal(p, msg) {
					t.Fatalf("echo %d: op %d fin %v len %d", i, h.Op, h.Fin, len(p))
				}
			}
			// Fragmented, with a ping in between: the pong comes first.
			c.send(false, ws.OpText, []byte("frag"))
			c.send(true, ws.OpPing, []byte("ping!"))
			c.send(true, ws.OpContinuation, []byte("ment"))
			if h, p := c.read(); h.Op != ws.OpPong || string(p) != "ping!" {
				t.Fatalf("pong: op %d %q", h.Op, p)
			}
			if h, p := c.read(); h.Op != ws.OpText || string(p) != "fragment" {
				t.Fatalf("fragmented echo: op %d %q", h.Op, p)
			}
			// Close handshake: the server echoes the code and closes.
			c.send(true, ws.OpClose, []byte{0x03, 0xe8, 'b', 'y', 'e'})
			h, p := c.read()
			if h.Op != ws.OpClose || len(p) < 2 || int(p[0])<<8|int(p[1]) != 1000 {
				t.Fatalf("close answer: op %d % x", h.Op, p)
			}
			if _, err := c.br.ReadByte(); err != io.EOF {
				t.Fatalf("after the close handshake: %v, want EOF", err)
			}
		})
	}
}

func TestHandshakeRefusals(t *testing.T) {
	addr := startServer(t, echoRoutes)
	for _, tc := range []struct {
		name  string
		req   string
		code  int
		field string
	}{
		{name: "version 8", req: "GET /events HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + testKey + "\r\nSec-WebSocket-Version: 8\r\n\r\n", code: 426, field: "Sec-Websocket-Version: 13"},
		{name: "no upgrade", req: "GET /events HTTP/1.1\r\nHost: x\r\nSec-WebSocket-Key: " + testKey + "\r\nSec-WebSocket-Version: 13\r\n\r\n", code: 426},
		{name: "bad key", req: "GET /events HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n", code: 400},
		{name: "cross origin", req: "GET /events HTTP/1.1\r\nHost: x\r\nOrigin: https://evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + testKey + "\r\nSec-WebSocket-Version: 13\r\n\r\n", code: 403},
		{name: "HTTP/1.0", req: "GET /events HTTP/1.0\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + testKey + "\r\nSec-WebSocket-Version: 13\r\n\r\n", code: 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
			io.WriteString(nc, tc.req)
			resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.code {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.code)
			}
			if tc.field != "" {
				k, v, _ := strings.Cut(tc.field, ": ")
				if resp.Header.Get(k) != v {
					t.Fatalf("%s = %q, want %q", k, resp.Header.Get(k), v)
				}
			}
		})
	}
	// A refused handshake leaves the connection serving HTTP.
	c, resp := dial(t, addr, "/proto", "Sec-WebSocket-Protocol: chat.v1, chat.v2\r\n")
	if resp.StatusCode != 101 || resp.Header.Get("Sec-WebSocket-Protocol") != "chat.v2" {
		t.Fatalf("subprotocol: %d %q", resp.StatusCode, resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	if _, p := c.read(); string(p) != "subprotocol=chat.v2" {
		t.Fatalf("handler saw %q", p)
	}
}

// TestProtocolErrors: each violation gets a close frame with its code (RFC 6455
// §7.4.1) and the connection is dropped.
func TestProtocolErrors(t *testing.T) {
	addr := startServer(t, echoRoutes)
	unmasked := ws.AppendFrame(nil, true, ws.OpText, []byte("x"))
	for _, tc := range []struct {
		name string
		send func(c *client)
		code int
	}{
		{name: "unmasked", send: func(c *client) { c.nc.Write(unmasked) }, code: 1002},
		{name: "reserved opcode", send: func(c *client) { c.send(true, 3, nil) }, code: 1002},
		{name: "continuation first", send: func(c *client) { c.send(true, ws.OpContinuation, []byte("x")) }, code: 1002},
		{name: "long ping", send: func(c *client) { c.send(true, ws.OpPing, make([]byte, 126)) }, code: 1002},
		{name: "invalid utf-8", send: func(c *client) { c.send(true, ws.OpText, []byte{0xce, 0xba, 0xed, 0xa0, 0x80}) }, code: 1007},
		{name: "too big", send: func(c *client) {
			// The header alone: the server refuses the length before the payload.
			c.nc.Write(ws.AppendHeader(nil, true, false, ws.OpBinary, 17<<20, true, [4]byte{1, 2, 3, 4}))
		}, code: 1009},
	} {
		for _, path := range []string{"/handler", "/events"} {
			t.Run(tc.name+path, func(t *testing.T) {
				c, _ := dial(t, addr, path)
				tc.send(c)
				h, p := c.read()
				if h.Op != ws.OpClose || len(p) < 2 || int(p[0])<<8|int(p[1]) != tc.code {
					t.Fatalf("got op %d % x, want close %d", h.Op, p, tc.code)
				}
				if _, err := io.Copy(io.Discard, c.br); err != nil {
					t.Fatalf("after the close frame: %v", err)
				}
			})
		}
	}
}

// TestServerClose: a handler that returns closes with 1000 and the server waits for
// the client's close frame.
func TestServerClose(t *testing.T) {
	var closed atomic.Int32
	addr := startServer(t, func(s *celeris.Server) {
		s.GET("/bye", websocket.Handler(nil, func(c *websocket.Conn) {
			_ = c.WriteText("bye")
		}))
		s.GET("/events-close", websocket.Events(nil, websocket.Callbacks{
			OnOpen: func(c *websocket.Conn) { _ = c.Close(4000, "app says bye") },
			OnClose: func(c *websocket.Conn, code int, reason string) {
				if code == 4000 {
					closed.Add(1)
				}
			},
		}))
	})
	c, _ := dial(t, addr, "/bye")
	if _, p := c.read(); string(p) != "bye" {
		t.Fatalf("got %q", p)
	}
	h, p := c.read()
	if h.Op != ws.OpClose || int(p[0])<<8|int(p[1]) != 1000 {
		t.Fatalf("close: op %d % x", h.Op, p)
	}
	c.send(true, ws.OpClose, p[:2])
	if _, err := c.br.ReadByte(); err != io.EOF {
		t.Fatalf("after the handshake: %v", err)
	}
	c, _ = dial(t, addr, "/events-close")
	h, p = c.read()
	if h.Op != ws.OpClose || int(p[0])<<8|int(p[1]) != 4000 || string(p[2:]) != "app says bye" {
		t.Fatalf("close: op %d % x", h.Op, p)
	}
	c.send(true, ws.OpClose, p[:2])
	_, _ = io.Copy(io.Discard, c.br)
	testkit.Until(5*time.Second, func() bool { return closed.Load() == 1 })
	if closed.Load() != 1 {
		t.Fatal("OnClose did not run with 4000")
	}
}
