package wsclient

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// serverFrame builds an unmasked server frame.
func serverFrame(fin bool, op byte, p []byte) []byte {
	b0 := op
	if fin {
		b0 |= 0x80
	}
	out := []byte{b0}
	switch n := len(p); {
	case n <= 125:
		out = append(out, byte(n))
	case n <= 0xffff:
		out = append(out, 126, byte(n>>8), byte(n))
	default:
		out = append(out, 127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(out, p...)
}

func TestAccept(t *testing.T) {
	// RFC 6455 §1.3's example.
	if got := Accept("dGhlIHNhbXBsZSBub25jZQ=="); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Errorf("Accept = %s", got)
	}
}

func TestAppendFrame(t *testing.T) {
	for _, n := range []int{0, 64, 125, 126, 16 << 10, 70000} {
		p := bytes.Repeat([]byte("xyz"), n/3+1)[:n]
		f := AppendFrame(nil, OpBinary, p)
		if len(f) != FrameLen(n) || f[0] != 0x82 || f[1]&0x80 == 0 {
			t.Fatalf("%d: frame of %d bytes, head % x", n, len(f), f[:2])
		}
		hl := headerLen(f[0], f[1])
		mask := f[hl-4 : hl]
		got := make([]byte, n)
		for i := range got {
			got[i] = f[hl+i] ^ mask[i&3]
		}
		if !bytes.Equal(got, p) {
			t.Errorf("%d: unmasked payload differs", n)
		}
	}
}

func TestParser(t *testing.T) {
	msg := bytes.Repeat([]byte("m"), 300)
	var stream []byte
	stream = append(stream, serverFrame(true, OpBinary, msg)...)
	stream = append(stream, serverFrame(true, OpPing, []byte("hi"))...)
	// A fragmented message with a pong in the middle.
	stream = append(stream, serverFrame(false, OpBinary, msg[:100])...)
	stream = append(stream, serverFrame(true, OpPong, nil)...)
	stream = append(stream, serverFrame(true, OpContinuation, msg[100:])...)
	for _, step := range []int{1, 3, 7, len(stream)} {
		p := Parser{Want: len(msg), Capture: true}
		total := 0
		for i := 0; i < len(stream); i += step {
			n, err := p.Feed(stream[i:min(i+step, len(stream))])
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			total += n
		}
		if total != 2 || !bytes.Equal(p.Payload, msg) || p.Op != OpBinary {
			t.Errorf("step %d: %d messages, payload %d bytes, op %d", step, total, len(p.Payload), p.Op)
		}
	}
	for name, c := range map[string]struct {
		in   []byte
		want error
	}{
		"short":  {serverFrame(true, OpBinary, msg[:10]), ErrProtocol},
		"long":   {serverFrame(true, OpBinary, append(msg, 'x')), ErrProtocol},
		"text":   {serverFrame(true, OpText, msg), ErrProtocol},
		"close":  {serverFrame(true, OpClose, []byte{3, 232}), ErrServerClose},
		"masked": {AppendFrame(nil, OpBinary, msg), ErrProtocol},
		"cont":   {serverFrame(true, OpContinuation, msg), ErrProtocol},
	} {
		p := Parser{Want: len(msg)}
		if _, err := p.Feed(c.in); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

func TestCheckHandshake(t *testing.T) {
	good := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + Accept(Key) + "\r\n\r\n"
	if n, err := CheckHandshake([]byte(good + "\x82\x00")); err != nil || n != len(good) {
		t.Errorf("good: %d, %v", n, err)
	}
	if n, err := CheckHandshake([]byte(good[:40])); err != nil || n != 0 {
		t.Errorf("partial: %d, %v", n, err)
	}
	for _, bad := range []string{
		"HTTP/1.1 400 Bad Request\r\n\r\n",
		strings.Replace(good, Accept(Key), "nope", 1),
	} {
		if _, err := CheckHandshake([]byte(bad)); !errors.Is(err, ErrHandshake) {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
}

// TestEcho runs the check against a gorilla/websocket echo server.
func TestEcho(t *testing.T) {
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		for {
			mt, m, err := c.ReadMessage()
			if err != nil {
				return
			}
			if r.URL.Query().Get("bad") != "" {
				m = m[1:]
			}
			if c.WriteMessage(mt, m) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, n := range []int{64, 16 << 10} {
		if err := Echo(addr, "/ws/echo", bytes.Repeat([]byte("ab"), n/2), 5*time.Second); err != nil {
			t.Errorf("%d bytes: %v", n, err)
		}
	}
	if err := Echo(addr, "/ws/echo?bad=1", []byte("hello"), 5*time.Second); !errors.Is(err, ErrProtocol) {
		t.Errorf("a wrong echo passed: %v", err)
	}
}
