package celerish3

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/websocket"
)

// maskedText is a client's masked WebSocket text frame (RFC 6455 §5.2).
func maskedText(msg string) []byte {
	key := [4]byte{1, 2, 3, 4}
	f := []byte{0x81, 0x80 | byte(len(msg)), key[0], key[1], key[2], key[3]}
	for i := 0; i < len(msg); i++ {
		f = append(f, msg[i]^key[i%4])
	}
	return f
}

// TestWebSocketOverHTTP3: an extended CONNECT (RFC 9220) opens a WebSocket on
// a request stream, served by the websocket package through the same tunnel
// as over HTTP/2: the handshake is answered 200, messages go both ways in DATA
// frames. The server's SETTINGS enable it.
func TestWebSocketOverHTTP3(t *testing.T) {
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{
		Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", Engine: celeris.EngineStd,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}},
		// A tunnel's bytes are not a request body: the limit does not apply.
		MaxRequestBodySize: 64,
	})
	s.GET("/ws/echo", websocket.Events(nil, websocket.Callbacks{
		OnMessage: func(c *websocket.Conn, mt websocket.MessageType, msg []byte) error {
			return c.WriteMessage(mt, msg)
		},
	})).ExtendedConnect()
	h := Enable(s, Config{})
	celeristest.Start(t, s)
	addr, err := h.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	c := dialRaw(t, addr.String())
	c.control()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ctrl, err := c.qc.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(ctrl, buf, 8)
	_, length, k := parseFrameHeader(buf[1:n]) // after the stream type
	if settingsValues(t, buf[1+k:1+k+int(length)])[settingEnableConnectProtocol] != 1 {
		t.Fatal("SETTINGS_ENABLE_CONNECT_PROTOCOL is not 1")
	}

	str, err := c.qc.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	req := frameBytes(frameHeaders, block(":method", "CONNECT", ":protocol", "websocket", ":scheme", "https",
		":path", "/ws/echo", ":authority", "localhost", "sec-websocket-version", "13"))
	msg := "hello h3 " + strings.Repeat("x", 100)
	req = append(req, frameBytes(frameData, maskedText(msg))...)
	if _, err := str.Write(req); err != nil {
		t.Fatal(err)
	}
	_ = str.SetReadDeadline(time.Now().Add(5 * time.Second))
	var got []byte
	tmp := make([]byte, 4096)
	want := append([]byte{0x81, byte(len(msg))}, msg...)
	for !bytes.Contains(got, want) {
		n, err := str.Read(tmp)
		got = append(got, tmp[:n]...)
		if err != nil {
			t.Fatalf("read %q: %v", got, err)
		}
	}
	if st := status(t, got); st != "200" {
		t.Fatalf("status %s", st)
	}
	// The echo came in a DATA frame after the HEADERS frame.
	_, hl, hn := parseFrameHeader(got)
	typ, dl, dn := parseFrameHeader(got[hn+int(hl):])
	if typ != frameData || !bytes.Equal(got[hn+int(hl)+dn:hn+int(hl)+dn+int(dl)], want) {
		t.Fatalf("response %q", got)
	}
	// A WebSocket close ends the stream.
	closeFrame := []byte{0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8}
	if _, err := str.Write(frameBytes(frameData, closeFrame)); err != nil {
		t.Fatal(err)
	}
	for {
		n, err := str.Read(tmp)
		got = append(got, tmp[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after close: %v", err)
		}
	}
}
