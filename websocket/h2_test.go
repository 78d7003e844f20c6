package websocket_test

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/internal/ws"
)

// h2client is an HTTP/2 client on x/net's Framer that opens WebSocket streams
// with extended CONNECT (RFC 8441).
type h2client struct {
	t        *testing.T
	nc       net.Conn
	fr       *http2.Framer
	enc      *hpack.Encoder
	hb       bytes.Buffer
	dec      *hpack.Decoder
	settings map[http2.SettingID]uint32
}

func dialH2(t *testing.T, nc net.Conn) *h2client {
	t.Helper()
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	c := &h2client{t: t, nc: nc, settings: map[http2.SettingID]uint32{}}
	c.enc = hpack.NewEncoder(&c.hb)
	c.dec = hpack.NewDecoder(4096, nil)
	if _, err := io.WriteString(nc, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	c.fr = http2.NewFramer(nc, bufio.NewReader(nc))
	c.fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
	c.fr.WriteWindowUpdate(0, 1<<24)
	// The server's SETTINGS come first.
	f, err := c.fr.ReadFrame()
	if err != nil {
		t.Fatal(err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok {
		t.Fatalf("first frame %v", f)
	}
	sf.ForeachSetting(func(s http2.Setting) error { c.settings[s.ID] = s.Val; return nil })
	c.fr.WriteSettingsAck()
	return c
}

// connect opens stream id with an extended CONNECT for path.
func (c *h2client) connect(id uint32, authority, path string, extra ...string) {
	c.t.Helper()
	c.hb.Reset()
	fields := []string{":method", "CONNECT", ":protocol", "websocket", ":scheme", "http", ":path", path, ":authority", authority, "sec-websocket-version", "13"}
	fields = append(fields, extra...)
	for i := 0; i+1 < len(fields); i += 2 {
		c.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	if err := c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hb.Bytes(), EndHeaders: true}); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next HEADERS (decoded) or DATA frame of stream id, skipping
// SETTINGS, PING and WINDOW_UPDATE.
func (c *h2client) next(id uint32) (fields map[string]string, data []byte, end bool) {
	c.t.Helper()
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.t.Fatalf("read frame: %v", err)
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			if f.StreamID != id {
				continue
			}
			fs, err := c.dec.DecodeFull(f.HeaderBlockFragment())
			if err != nil {
				c.t.Fatal(err)
			}
			m := map[string]string{}
			for _, hf := range fs {
				m[hf.Name] = hf.Value
			}
			return m, nil, f.StreamEnded()
		case *http2.DataFrame:
			if f.StreamID != id {
				continue
			}
			if n := len(f.Data()); n > 0 {
				c.fr.WriteWindowUpdate(id, uint32(n))
				c.fr.WriteWindowUpdate(0, uint32(n))
			}
			return nil, append([]byte(nil), f.Data()...), f.StreamEnded()
		case *http2.RSTStreamFrame:
			c.t.Fatalf("stream %d reset: %v", f.StreamID, f.ErrCode)
		case *http2.GoAwayFrame:
			if f.ErrCode == http2.ErrCodeNo {
				continue // a graceful shutdown: open streams go on
			}
			c.t.Fatalf("GOAWAY %v %q", f.ErrCode, f.DebugData())
		}
	}
}

// wsConn reads WebSocket frames from a stream's DATA.
type wsStream struct {
	c     *h2client
	id    uint32
	buf   []byte
	ended bool // END_STREAM came (possibly on the DATA frame of the last bytes)
}

func (s *wsStream) send(op ws.Opcode, p []byte, end bool) {
	key := [4]byte{9, 8, 7, 6}
	b := ws.AppendHeader(nil, true, false, op, len(p), true, key)
	start := len(b)
	b = append(b, p...)
	ws.Mask(key, 0, b[start:])
	for len(b) > 0 { // DATA frames of at most the default SETTINGS_MAX_FRAME_SIZE
		n := min(len(b), 16384)
		if err := s.c.fr.WriteData(s.id, end && n == len(b), b[:n]); err != nil {
			s.c.t.Fatal(err)
		}
		b = b[n:]
	}
}

func (s *wsStream) read() (ws.Header, []byte, bool) {
	for {
		var h ws.Header
		n, err := ws.ParseHeader(s.buf, &h, false, false)
		if err == nil && len(s.buf) >= n+int(h.Length) {
			p := append([]byte(nil), s.buf[n:n+int(h.Length)]...)
			s.buf = s.buf[n+int(h.Length):]
			return h, p, false
		}
		if err != nil && err != ws.ErrNeedMore {
			s.c.t.Fatalf("server frame: %v", err)
		}
		if s.ended {
			return h, nil, true
		}
		_, data, end := s.c.next(s.id)
		s.buf = append(s.buf, data...)
		s.ended = end
	}
}

// TestWebSocketOverHTTP2: RFC 8441 over h2c and h2 (TLS): the server advertises
// SETTINGS_ENABLE_CONNECT_PROTOCOL, answers the extended CONNECT with 200 and serves
// the stream with the same handlers as the HTTP/1.1 path: echo on a blocking
// handler and on callbacks, two WebSockets at once on one connection, pings, the
// close handshake and END_STREAM.
func TestWebSocketOverHTTP2(t *testing.T) {
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s, addr := celeristest.Serve(t, celeris.Config{Engine: testEngine, TLSAddr: "127.0.0.1:0", TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}}, echoRoutes)
	for _, transport := range []string{"h2c", "h2"} {
		t.Run(transport, func(t *testing.T) {
			var nc net.Conn
			var err error
			if transport == "h2c" {
				nc, err = net.Dial("tcp", addr)
			} else {
				nc, err = tls.Dial("tcp", s.TLSAddr().String(), &tls.Config{RootCAs: cert.Pool(), ServerName: "localhost", NextProtos: []string{"h2"}})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			c := dialH2(t, nc)
			if c.settings[0x8] != 1 {
				t.Fatalf("SETTINGS_ENABLE_CONNECT_PROTOCOL = %d, want 1", c.settings[0x8])
			}
			streams := []*wsStream{{c: c, id: 1}, {c: c, id: 3}}
			for i, st := range streams {
				path := []string{"/handler", "/events"}[i]
				c.connect(st.id, "localhost", path)
				fields, _, end := c.next(st.id)
				if fields[":status"] != "200" || end {
					t.Fatalf("%s: answer %v end %v", path, fields, end)
				}
			}
			t.Log("both streams open")
			for round := 0; round < 3; round++ {
				for i, st := range streams {
					msg := strings.Repeat("x", 100*round+i)
					st.send(ws.OpText, []byte(msg), false)
					if h, p, _ := st.read(); h.Op != ws.OpText || string(p) != msg {
						t.Fatalf("stream %d round %d: op %d %q", st.id, round, h.Op, p)
					}
				}
			}
			t.Log("echoes done")
			big := bytes.Repeat([]byte{7}, 300<<10) // over the stream's initial windows
			streams[0].send(ws.OpBinary, big, false)
			// 300 KiB leave in two fragments (RFC 6455 §5.4).
			h, p, _ := streams[0].read()
			p = bytes.Clone(p)
			for h.Op == ws.OpBinary && !h.Fin {
				hc, q, _ := streams[0].read()
				if hc.Op != ws.OpContinuation {
					t.Fatalf("op %d inside a fragmented message", hc.Op)
				}
				p, h.Fin = append(p, q...), hc.Fin
			}
			if h.Op != ws.OpBinary || !bytes.Equal(p, big) {
				t.Fatalf("large message: op %d %d bytes", h.Op, len(p))
			}
			streams[1].send(ws.OpPing, []byte("p"), false)
			if h, p, _ := streams[1].read(); h.Op != ws.OpPong || string(p) != "p" {
				t.Fatalf("pong: op %d %q", h.Op, p)
			}
			for _, st := range streams {
				st.send(ws.OpClose, []byte{0x03, 0xe8}, true)
				h, p, _ := st.read()
				if h.Op != ws.OpClose || len(p) < 2 || int(p[0])<<8|int(p[1]) != 1000 {
					t.Fatalf("stream %d close: op %d % x", st.id, h.Op, p)
				}
				if _, _, end := st.read(); !end {
					t.Fatalf("stream %d: no END_STREAM after the close handshake", st.id)
				}
			}
		})
	}
}

// TestExtendedConnectRules: RFC 8441 §4: :protocol only with CONNECT, and an
// extended CONNECT needs :scheme and :path; a plain CONNECT stays refused.
func TestExtendedConnectRules(t *testing.T) {
	_, addr := celeristest.Serve(t, celeris.Config{Engine: testEngine}, echoRoutes)
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := dialH2(t, nc)
	send := func(id uint32, fields ...string) {
		c.hb.Reset()
		for i := 0; i+1 < len(fields); i += 2 {
			c.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
		}
		c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: c.hb.Bytes(), EndHeaders: true, EndStream: true})
	}
	send(1, ":method", "GET", ":protocol", "websocket", ":scheme", "http", ":path", "/events", ":authority", "x")
	send(3, ":method", "CONNECT", ":protocol", "websocket", ":authority", "x")
	for _, id := range []uint32{1, 3} {
		for {
			f, err := c.fr.ReadFrame()
			if err != nil {
				t.Fatal(err)
			}
			if rst, ok := f.(*http2.RSTStreamFrame); ok && rst.StreamID == id {
				if rst.ErrCode != http2.ErrCodeProtocol {
					t.Fatalf("stream %d: %v, want PROTOCOL_ERROR", id, rst.ErrCode)
				}
				break
			}
		}
	}
}
