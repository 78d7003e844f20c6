package websocket_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/ws"
	"github.com/celeris-dev/celeris/websocket"
)

// TestMessageThenCloseHTTP2: over an extended CONNECT stream as over HTTP/1.1, a
// message followed at once by Close (one DATA frame) is echoed before the close
// reply, and END_STREAM follows.
func TestMessageThenCloseHTTP2(t *testing.T) {
	for transport, c := range dialBoth(t, celeris.Config{}, echoRoutes) {
		for i, path := range []string{"/handler", "/events"} {
			id := uint32(1 + 2*i)
			c.connect(id, "localhost", path)
			if fields, _, _ := c.next(id); fields[":status"] != "200" {
				t.Fatalf("%s %s: %v", transport, path, fields)
			}
			key := [4]byte{1, 2, 3, 4}
			var b []byte
			for _, f := range []struct {
				op ws.Opcode
				p  []byte
			}{{ws.OpText, []byte("Hello World!")}, {ws.OpClose, []byte{0x03, 0xe8}}} {
				b = ws.AppendHeader(b, true, false, f.op, len(f.p), true, key)
				start := len(b)
				b = append(b, f.p...)
				ws.Mask(key, 0, b[start:])
			}
			if err := c.fr.WriteData(id, false, b); err != nil {
				t.Fatal(err)
			}
			st := &wsStream{c: c, id: id}
			if h, p, _ := st.read(); h.Op != ws.OpText || string(p) != "Hello World!" {
				t.Fatalf("%s %s: first frame op %d %q, want the echo", transport, path, h.Op, p)
			}
			if h, p, _ := st.read(); h.Op != ws.OpClose || len(p) < 2 || int(p[0])<<8|int(p[1]) != 1000 {
				t.Fatalf("%s %s: second frame op %d % x, want close 1000", transport, path, h.Op, p)
			}
			if _, _, end := st.read(); !end {
				t.Fatalf("%s %s: no END_STREAM after the close handshake", transport, path)
			}
		}
	}
}

// TestGracefulShutdownHTTP2WebSocket: a graceful shutdown with a WebSocket open on
// an HTTP/2 stream sends it close 1001 and ends when the client answers.
func TestGracefulShutdownHTTP2WebSocket(t *testing.T) {
	var code atomic.Int64
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", Engine: testEngine, EventLoops: 2})
	s.GET("/events", websocket.Events(nil, websocket.Callbacks{
		OnClose: func(c *websocket.Conn, c2 int, _ string) { code.Store(int64(c2)) },
	})).ExtendedConnect()
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	<-s.Ready()
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := dialH2(t, nc)
	c.connect(1, "localhost", "/events")
	if fields, _, _ := c.next(1); fields[":status"] != "200" {
		t.Fatalf("%v", fields)
	}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	st := &wsStream{c: c, id: 1}
	h, p, _ := st.read()
	if h.Op != ws.OpClose || len(p) < 2 || int(p[0])<<8|int(p[1]) != 1001 {
		t.Fatalf("op %d % x, want close 1001", h.Op, p)
	}
	st.send(ws.OpClose, []byte{0x0f, 0xa0}, true) // 4000
	if err := <-done; err != nil {
		t.Fatalf("Shutdown after %v: %v", time.Since(start), err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Shutdown took %v", d)
	}
	<-errc
	if got := code.Load(); got != 4000 {
		t.Errorf("OnClose saw %d, want 4000", got)
	}
}
