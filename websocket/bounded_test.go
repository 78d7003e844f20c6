package websocket_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/ws"
	"github.com/celeris-dev/celeris/websocket"
)

// TestLargeMessageWaitsForTheClient: a 32 MiB message to a client that does not
// read yet is not queued whole: WriteMessage has not returned while the client
// waits, and returns once it read the message, which arrives whole and intact in
// fragments (RFC 6455 §5.4), with a ping answered between them.
func TestLargeMessageWaitsForTheClient(t *testing.T) {
	const size = 32 << 20
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = byte(i * 13)
	}
	returned := make(chan error, 1)
	addr := startServer(t, func(s *celeris.Server) {
		s.GET("/big", websocket.Handler(nil, func(c *websocket.Conn) {
			if _, _, err := c.ReadMessage(); err != nil {
				returned <- err
				return
			}
			returned <- c.WriteMessage(websocket.BinaryMessage, msg)
			_, _, _ = c.ReadMessage()
		}))
	})
	c, resp := dial(t, addr, "/big")
	if resp.StatusCode != 101 {
		t.Fatalf("handshake: %d", resp.StatusCode)
	}
	_ = c.nc.SetDeadline(time.Now().Add(30 * time.Second))
	c.send(true, ws.OpText, []byte("go"))
	select {
	case err := <-returned:
		t.Fatalf("WriteMessage of %d MiB returned (%v) while the client read nothing: queued whole", size>>20, err)
	case <-time.After(300 * time.Millisecond):
	}
	c.send(true, ws.OpPing, []byte("p"))
	start := time.Now()
	var got []byte
	pongs, frames := 0, 0
	for {
		h, p := c.read()
		if h.Op == ws.OpPong {
			pongs++
			continue
		}
		frames++
		if want := map[bool]ws.Opcode{true: ws.OpBinary, false: ws.OpContinuation}[frames == 1]; h.Op != want {
			t.Fatalf("frame %d: op %d, want %d", frames, h.Op, want)
		}
		got = append(got, p...)
		if h.Fin {
			break
		}
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("got %d bytes in %d frames, not the %d sent", len(got), frames, size)
	}
	t.Logf("%d MiB in %d frames read in %v", size>>20, frames, time.Since(start).Round(time.Millisecond))
	if pongs != 1 || frames < 2 {
		t.Fatalf("%d pongs, %d frames", pongs, frames)
	}
	select {
	case err := <-returned:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("WriteMessage did not return after the client read the message")
	}
}

// TestFragmentedMessagesDoNotInterleave: two goroutines writing large messages
// (fragmented) on one connection at once: each message arrives whole, its
// fragments never mixed with the other's (RFC 6455 §5.4).
func TestFragmentedMessagesDoNotInterleave(t *testing.T) {
	const size = 1 << 20
	addr := startServer(t, func(s *celeris.Server) {
		s.GET("/two", websocket.Handler(nil, func(c *websocket.Conn) {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
			done := make(chan struct{})
			for _, b := range []byte{'a', 'b'} {
				go func() {
					defer func() { done <- struct{}{} }()
					for range 3 {
						if c.WriteMessage(websocket.BinaryMessage, bytes.Repeat([]byte{b}, size)) != nil {
							return
						}
					}
				}()
			}
			<-done
			<-done
			_, _, _ = c.ReadMessage()
		}))
	})
	c, resp := dial(t, addr, "/two")
	if resp.StatusCode != 101 {
		t.Fatalf("handshake: %d", resp.StatusCode)
	}
	c.send(true, ws.OpText, []byte("go"))
	count := map[byte]int{}
	for range 6 {
		h, p := c.read()
		if h.Op != ws.OpBinary {
			t.Fatalf("a message starts with op %d", h.Op)
		}
		msg := bytes.Clone(p)
		for !h.Fin {
			var q []byte
			h, q = c.read()
			if h.Op != ws.OpContinuation {
				t.Fatalf("op %d inside a fragmented message", h.Op)
			}
			msg = append(msg, q...)
		}
		if len(msg) != size || bytes.Count(msg, msg[:1]) != size {
			t.Fatalf("a message of %d bytes mixes writers", len(msg))
		}
		count[msg[0]]++
	}
	if count['a'] != 3 || count['b'] != 3 {
		t.Fatalf("messages per writer: %v", count)
	}
}
