package websocket_test

import (
	"bufio"
	"crypto/tls"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/internal/ws"
)

// TestWebSocketOverTLS: wss:// (RFC 6455 over TLS, ALPN http/1.1) on the TLS
// listener: the handshake and an echo.
func TestWebSocketOverTLS(t *testing.T) {
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := celeristest.Serve(t, celeris.Config{TLSAddr: "127.0.0.1:0", TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}}, echoRoutes)
	nc, err := tls.Dial("tcp", s.TLSAddr().String(), &tls.Config{RootCAs: cert.Pool(), ServerName: "localhost", NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(nc, "GET /events HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "+testKey+"\r\nSec-WebSocket-Version: 13\r\n\r\n")
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	c := &client{t: t, nc: nc, br: br}
	for _, m := range []string{"over", "tls"} {
		c.send(true, ws.OpText, []byte(m))
		if h, p := c.read(); h.Op != ws.OpText || string(p) != m {
			t.Fatalf("echo: op %d %q", h.Op, p)
		}
	}
	c.send(true, ws.OpClose, []byte{0x03, 0xe8})
	expectClose(t, c, 1000)
}
