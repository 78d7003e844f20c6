package ws

import (
	"net"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/internal/work"
)

// memTransport is an httpmsg.Conn in memory: Write keeps the output, Wake
// signals the test, which plays the event loop.
type memTransport struct {
	out  []byte
	wake chan struct{}
}

func (m *memTransport) Write(b []byte) { m.out = append(m.out, b...) }
func (m *memTransport) Wake() {
	select {
	case m.wake <- struct{}{}:
	default: // coalesced, as the engine's wake-ups are
	}
}
func (m *memTransport) Close()               {}
func (m *memTransport) RemoteAddr() net.Addr { return nil }

// TestLargeEchoKeepsNoBuffer: once a 16 KiB echo is done, the connection keeps
// no buffer larger than keepBuf (reader, queue, output): large buffers go back to
// bufpool, so 10,000 connections echoing 16 KiB do not each hold several.
func TestLargeEchoKeepsNoBuffer(t *testing.T) {
	echo := func(c *Conn, op Opcode, p []byte) error { return c.WriteMessage(op, p) }
	for _, tc := range []struct {
		name string
		app  App
	}{
		{"callbacks", App{OnOpen: func(*Conn) {}, OnMessage: echo}},
		{"handler", App{Handler: func(c *Conn) {
			for {
				op, p, err := c.ReadMessage()
				if err != nil {
					return
				}
				if echo(c, op, p) != nil {
					return
				}
			}
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := &memTransport{wake: make(chan struct{}, 1)}
			c := NewConn(tr, Config{MaxMessage: 1 << 20, Pool: work.NewPool(0, time.Minute)}, tc.app)
			c.Start()
			payload := make([]byte, 16<<10)
			for i := range payload {
				payload[i] = byte(i)
			}
			frame := clientFrame(true, OpBinary, payload)
			for range 3 {
				tr.out = tr.out[:0]
				// In two reads, as a socket may deliver it.
				n1, err := c.OnData(frame[:9000])
				if err != nil {
					t.Fatal(err)
				}
				if n2, err := c.OnData(frame[n1:]); n1+n2 != len(frame) || err != nil {
					t.Fatalf("OnData: %d+%d of %d, %v", n1, n2, len(frame), err)
				}
				for len(tr.out) < len(payload) {
					<-tr.wake
					_ = c.OnWake()
					c.AfterFlush(0)
				}
				if got := tr.out[len(tr.out)-len(payload):]; string(got) != string(payload) {
					t.Fatal("wrong echo")
				}
			}
			// Wait for the application to be done with the message: the
			// callbacks' worker stops, the handler waits in ReadMessage.
			testkit.Wait(t, "the application to finish", func() bool {
				c.mu.Lock()
				defer c.mu.Unlock()
				return c.qhead == len(c.queue) && (tc.app.Handler == nil && !c.running || tc.app.Handler != nil && c.current == nil)
			})
			c.mu.Lock()
			defer c.mu.Unlock()
			if cap(c.rd.msg) > keepBuf || cap(c.out) > keepBuf || cap(c.spare) > keepBuf {
				t.Errorf("kept: reader %d, out %d, spare %d bytes", cap(c.rd.msg), cap(c.out), cap(c.spare))
			}
			for _, b := range c.free {
				if cap(b) > keepBuf {
					t.Errorf("kept a %d-byte message buffer", cap(b))
				}
			}
		})
	}
}
