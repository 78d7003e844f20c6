package websocket_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/internal/ws"
)

// frame is one frame of a case: sent by the client (masked) or expected from the
// server (unmasked).
type frame struct {
	fin  bool
	op   ws.Opcode
	data []byte
	raw  []byte // sent as is instead (bad framing)
}

func txt(s string) frame                { return frame{fin: true, op: ws.OpText, data: []byte(s)} }
func bin(b []byte) frame                { return frame{fin: true, op: ws.OpBinary, data: b} }
func ping(s string) frame               { return frame{fin: true, op: ws.OpPing, data: []byte(s)} }
func pong(s string) frame               { return frame{fin: true, op: ws.OpPong, data: []byte(s)} }
func part(op ws.Opcode, s string) frame { return frame{op: op, data: []byte(s)} }
func cont(fin bool, s string) frame {
	return frame{fin: fin, op: ws.OpContinuation, data: []byte(s)}
}
func closeFrame(code int, reason string) frame {
	p := binary.BigEndian.AppendUint16(nil, uint16(code))
	return frame{fin: true, op: ws.OpClose, data: append(p, reason...)}
}
func rsv(f frame, bits byte) frame {
	f.raw = maskedFrame(f)
	f.raw[0] |= bits
	return f
}

func maskedFrame(f frame) []byte {
	key := [4]byte{0x11, 0x22, 0x33, 0x44}
	b := ws.AppendHeader(nil, f.fin, false, f.op, len(f.data), true, key)
	start := len(b)
	b = append(b, f.data...)
	ws.Mask(key, 0, b[start:])
	return b
}

// TestAutobahnCases follows the Autobahn test suite's sections 1-7 and 9 over a
// real socket against an echo endpoint (blocking handler and callbacks): each case
// is the exact frames a client sends, the frames the server must send back, and
// the close code of the server's close frame: the code it fails the connection
// with, or the one it echoes (RFC 6455 §5.5.1) when the case sends a close; 0: the
// case ends with the client's own close, answered with 1000. Cases sent byte by
// byte ("slow") must give the same answer.
func TestAutobahnCases(t *testing.T) {
	addr := startServer(t, echoRoutes)
	k64 := bytes.Repeat([]byte("*"), 65536)
	for _, tc := range []struct {
		name string
		send []frame
		want []frame
		fail int
		slow bool
	}{
		// 1: framing.
		{name: "1.1.1 text 0", send: []frame{txt("")}, want: []frame{txt("")}},
		{name: "1.1.2 text 125", send: []frame{txt(strings.Repeat("*", 125))}, want: []frame{txt(strings.Repeat("*", 125))}},
		{name: "1.1.3 text 126", send: []frame{txt(strings.Repeat("*", 126))}, want: []frame{txt(strings.Repeat("*", 126))}},
		{name: "1.1.4 text 127", send: []frame{txt(strings.Repeat("*", 127))}, want: []frame{txt(strings.Repeat("*", 127))}},
		{name: "1.1.5 text 128", send: []frame{txt(strings.Repeat("*", 128))}, want: []frame{txt(strings.Repeat("*", 128))}},
		{name: "1.1.6 text 65535", send: []frame{txt(strings.Repeat("*", 65535))}, want: []frame{txt(strings.Repeat("*", 65535))}},
		{name: "1.1.7 text 65536", send: []frame{txt(string(k64))}, want: []frame{txt(string(k64))}},
		{name: "1.1.8 text 65536 slow", send: []frame{txt(string(k64[:4096]))}, want: []frame{txt(string(k64[:4096]))}, slow: true},
		{name: "1.2.1 binary 0", send: []frame{bin(nil)}, want: []frame{bin(nil)}},
		{name: "1.2.7 binary 65536", send: []frame{bin(k64)}, want: []frame{bin(k64)}},
		// 2: pings and pongs.
		{name: "2.1 ping empty", send: []frame{ping("")}, want: []frame{pong("")}},
		{name: "2.2 ping text", send: []frame{ping("Hello, world!")}, want: []frame{pong("Hello, world!")}},
		{name: "2.3 ping binary", send: []frame{{fin: true, op: ws.OpPing, data: []byte{0, 0xff, 0xfe, 0xfd}}}, want: []frame{{fin: true, op: ws.OpPong, data: []byte{0, 0xff, 0xfe, 0xfd}}}},
		{name: "2.4 ping 125", send: []frame{ping(strings.Repeat("x", 125))}, want: []frame{pong(strings.Repeat("x", 125))}},
		{name: "2.5 ping 126", send: []frame{ping(strings.Repeat("x", 126))}, fail: 1002},
		{name: "2.6 ping 125 slow", send: []frame{ping(strings.Repeat("x", 125))}, want: []frame{pong(strings.Repeat("x", 125))}, slow: true},
		{name: "2.7 unsolicited pong", send: []frame{pong(""), txt("after")}, want: []frame{txt("after")}},
		{name: "2.9 pong then ping", send: []frame{pong("unsolicited"), ping("solicited")}, want: []frame{pong("solicited")}},
		{name: "2.10 ten pings", send: repeatFrame(ping("p"), 10), want: repeatFrame(pong("p"), 10)},
		// 3: reserved bits.
		{name: "3.1 rsv1", send: []frame{rsv(txt("Hello"), 0x40)}, fail: 1002},
		{name: "3.2 rsv2 after a message", send: []frame{txt("Hello"), rsv(txt("Hello"), 0x20), ping("")}, want: []frame{txt("Hello")}, fail: 1002},
		{name: "3.4 rsv4 slow", send: []frame{txt("Hello"), rsv(txt("Hello"), 0x10)}, want: []frame{txt("Hello")}, fail: 1002, slow: true},
		{name: "3.6 rsv6 on binary", send: []frame{rsv(bin([]byte{1}), 0x60)}, fail: 1002},
		{name: "3.7 rsv7 on ping", send: []frame{rsv(ping(""), 0x70)}, fail: 1002},
		// 4: opcodes.
		{name: "4.1.1 opcode 3", send: []frame{{fin: true, op: 3}}, fail: 1002},
		{name: "4.1.2 opcode 4 with payload", send: []frame{{fin: true, op: 4, data: []byte("reserved")}}, fail: 1002},
		{name: "4.1.3 opcode 5 after text", send: []frame{txt("Hello"), {fin: true, op: 5}, ping("")}, want: []frame{txt("Hello")}, fail: 1002},
		{name: "4.2.1 opcode 11", send: []frame{{fin: true, op: 11}}, fail: 1002},
		{name: "4.2.5 opcode 15 after text", send: []frame{txt("Hello"), {fin: true, op: 15, data: []byte("x")}, ping("")}, want: []frame{txt("Hello")}, fail: 1002},
		// 5: fragmentation.
		{name: "5.1 fragmented ping", send: []frame{{op: ws.OpPing, data: []byte("frag")}, cont(true, "ment")}, fail: 1002},
		{name: "5.2 fragmented pong", send: []frame{{op: ws.OpPong, data: []byte("frag")}, cont(true, "ment")}, fail: 1002},
		{name: "5.3 text in two fragments", send: []frame{part(ws.OpText, "frag"), cont(true, "ment")}, want: []frame{txt("fragment")}},
		{name: "5.5 text in many fragments slow", send: []frame{part(ws.OpText, "f"), cont(false, "r"), cont(false, "a"), cont(true, "g")}, want: []frame{txt("frag")}, slow: true},
		{name: "5.6 ping between fragments", send: []frame{part(ws.OpText, "frag"), ping("p"), cont(true, "ment")}, want: []frame{pong("p"), txt("fragment")}},
		{name: "5.9 continuation first", send: []frame{cont(true, "x"), txt("after")}, fail: 1002},
		{name: "5.15 continuation after a message", send: []frame{part(ws.OpText, "a"), cont(true, "b"), cont(false, "c"), cont(true, "d")}, want: []frame{txt("ab")}, fail: 1002},
		{name: "5.18 text inside text", send: []frame{part(ws.OpText, "a"), txt("b")}, fail: 1002},
		{name: "5.19 fragments with pings", send: []frame{part(ws.OpText, "1"), cont(false, "2"), ping("a"), cont(false, "3"), ping("b"), cont(true, "4")}, want: []frame{pong("a"), pong("b"), txt("1234")}},
		// 6: UTF-8.
		{name: "6.2.1 valid multi-byte", send: []frame{txt("κόσμε 𝄞 \u0800\uffff\U0010FFFF")}, want: []frame{txt("κόσμε 𝄞 \u0800\uffff\U0010FFFF")}},
		{name: "6.2.3 valid split mid-rune", send: []frame{part(ws.OpText, "κό\xcf"), cont(true, "\x83με")}, want: []frame{txt("κόσμε")}},
		{name: "6.3.1 surrogate", send: []frame{txt("κόσμε\xed\xa0\x80edited")}, fail: 1007},
		{name: "6.4.1 fail fast in the first fragment", send: []frame{part(ws.OpText, "κόσμε\xf4\x90\x80\x80"), cont(true, "edited")}, fail: 1007},
		{name: "6.5.2 valid 4-byte slow", send: []frame{txt("𝄞")}, want: []frame{txt("𝄞")}, slow: true},
		{name: "6.6.x invalid slow", send: []frame{txt("\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80")}, fail: 1007, slow: true},
		{name: "6.8.1 overlong slash", send: []frame{txt("\xc0\xaf")}, fail: 1007},
		{name: "6.9.x above U+10FFFF", send: []frame{txt("\xf4\x90\x80\x80")}, fail: 1007},
		{name: "6.x lone continuation", send: []frame{txt("\x80")}, fail: 1007},
		{name: "6.x text ends mid-rune", send: []frame{txt("a\xe2\x82")}, fail: 1007},
		// 7: close.
		{name: "7.1.1 echo then close", send: []frame{txt("Hello World!"), closeFrame(1000, "")}, want: []frame{txt("Hello World!")}, fail: 1000},
		{name: "7.1.1 echo then close slow", send: []frame{txt("Hello World!"), closeFrame(1000, "")}, want: []frame{txt("Hello World!")}, fail: 1000, slow: true},
		{name: "7.1.3 text after close is ignored", send: []frame{closeFrame(1000, ""), txt("ignored")}, fail: 1000},
		{name: "7.3.1 close empty", send: []frame{{fin: true, op: ws.OpClose}}, fail: 1000},
		{name: "7.3.2 close 1 byte", send: []frame{{fin: true, op: ws.OpClose, data: []byte{3}}}, fail: 1002},
		{name: "7.3.4 close with reason", send: []frame{closeFrame(1000, "Hello World!")}, fail: 1000},
		{name: "7.3.6 close 126 bytes", send: []frame{closeFrame(1000, strings.Repeat("*", 124))}, fail: 1002},
		{name: "7.5.1 close invalid UTF-8 reason", send: []frame{closeFrame(1000, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80")}, fail: 1007},
		{name: "7.7.x valid code 3000 is echoed", send: []frame{closeFrame(3000, "")}, fail: 3000},
		{name: "7.7.x valid code 4999 is echoed", send: []frame{closeFrame(4999, "")}, fail: 4999},
		{name: "7.9.1 code 0", send: []frame{closeFrame(0, "")}, fail: 1002},
		{name: "7.9.3 code 1004", send: []frame{closeFrame(1004, "")}, fail: 1002},
		{name: "7.9.4 code 1005", send: []frame{closeFrame(1005, "")}, fail: 1002},
		{name: "7.9.5 code 1006", send: []frame{closeFrame(1006, "")}, fail: 1002},
		{name: "7.9.6 code 1016", send: []frame{closeFrame(1016, "")}, fail: 1002},
		{name: "7.9.9 code 2999", send: []frame{closeFrame(2999, "")}, fail: 1002},
		{name: "7.13.1 code 5000", send: []frame{closeFrame(5000, "")}, fail: 1002},
		// 9: limits.
		{name: "9.1.x text 1 MiB", send: []frame{txt(strings.Repeat("*", 1<<20))}, want: []frame{txt(strings.Repeat("*", 1<<20))}},
		{name: "9.2.x binary 4 MiB", send: []frame{bin(bytes.Repeat([]byte{0xfe}, 4<<20))}, want: []frame{bin(bytes.Repeat([]byte{0xfe}, 4<<20))}},
		{name: "9.x 1 MiB in 64 KiB fragments", send: fragments(ws.OpBinary, 1<<20, 64<<10), want: []frame{bin(bytes.Repeat([]byte{'f'}, 1<<20))}},
		{name: "9.x over the limit", send: []frame{{raw: ws.AppendHeader(nil, true, false, ws.OpBinary, 17<<20, true, [4]byte{1, 2, 3, 4})}}, fail: 1009},
	} {
		for _, path := range []string{"/handler", "/events"} {
			t.Run(tc.name+path, func(t *testing.T) {
				c, resp := dial(t, addr, path)
				if resp.StatusCode != 101 {
					t.Fatalf("handshake: %d", resp.StatusCode)
				}
				var out []byte
				for _, f := range tc.send {
					if f.raw != nil {
						out = append(out, f.raw...)
					} else {
						out = append(out, maskedFrame(f)...)
					}
				}
				go func() {
					if !tc.slow {
						_, _ = c.nc.Write(out)
						return
					}
					for i := range out {
						if _, err := c.nc.Write(out[i : i+1]); err != nil {
							return
						}
						testkit.Slow(50 * time.Microsecond) // a sleep: one byte per write, each in a segment of its own, read on its own only if the next has not come yet
					}
				}()
				for i, w := range tc.want {
					h, p := c.read()
					if w.fin && !h.Fin && (h.Op == ws.OpText || h.Op == ws.OpBinary) {
						// The server sends a large message in fragments (RFC 6455
						// §5.4): what counts is the message.
						p = bytes.Clone(p)
						for !h.Fin {
							hc, q := c.read()
							if hc.Op != ws.OpContinuation {
								t.Fatalf("answer %d: op %d inside a fragmented message", i, hc.Op)
							}
							p, h.Fin = append(p, q...), hc.Fin
						}
					}
					if h.Op != w.op || h.Fin != w.fin || !bytes.Equal(p, w.data) {
						t.Fatalf("answer %d: op %d fin %v %d bytes %.40q; want op %d fin %v %d bytes %.40q", i, h.Op, h.Fin, len(p), p, w.op, w.fin, len(w.data), w.data)
					}
				}
				if tc.fail == 0 {
					// Our own close: answered with 1000, then the server closes.
					_, _ = c.nc.Write(maskedFrame(closeFrame(1000, "")))
					expectClose(t, c, 1000)
					return
				}
				expectClose(t, c, tc.fail)
			})
		}
	}
}

// expectClose reads the server's close frame with code and then the end of the
// connection (a reset counts: the server closed with client bytes unread).
func expectClose(t *testing.T, c *client, code int) {
	t.Helper()
	h, p := c.read()
	if h.Op != ws.OpClose || len(p) < 2 || int(binary.BigEndian.Uint16(p)) != code {
		t.Fatalf("got op %d % x, want close %d", h.Op, p[:min(len(p), 16)], code)
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, c.br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("the server did not close the connection after its close frame")
	}
}

func repeatFrame(f frame, n int) []frame {
	out := make([]frame, n)
	for i := range out {
		out[i] = f
	}
	return out
}

func fragments(op ws.Opcode, total, size int) []frame {
	var out []frame
	for sent := 0; sent < total; sent += size {
		f := frame{op: ws.OpContinuation, data: bytes.Repeat([]byte{'f'}, size)}
		if sent == 0 {
			f.op = op
		}
		f.fin = sent+size >= total
		out = append(out, f)
	}
	return out
}
