//go:build linux

package websocket

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	"github.com/gorilla/websocket"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
)

// A gorilla or coder upgrade, through Adapt's Hijack, on a connection whose
// client reset it before the event loop served the hijack, fails instead of
// waiting forever (each wait held a handler and a worker; with MaxWorkers the
// server then answered 503). The loop is kept busy by an inline route while the
// client resets and the handler upgrades, so that the loop sees the reset first.
func TestUpgradeAfterClientReset(t *testing.T) {
	for _, lib := range []string{"gorilla", "coder"} {
		t.Run(lib, func(t *testing.T) {
			reset := make(chan struct{})
			blocking := make(chan struct{})
			result := make(chan error, 1)
			upgrade := func(w http.ResponseWriter, r *http.Request) {
				<-reset
				time.Sleep(20 * time.Millisecond) // the RST is in the server's socket
				var err error
				if lib == "gorilla" {
					var c *websocket.Conn
					if c, err = (&websocket.Upgrader{}).Upgrade(w, r, nil); err == nil {
						c.Close()
					}
				} else {
					var c *coder.Conn
					if c, err = coder.Accept(w, r, nil); err == nil {
						c.CloseNow()
					}
				}
				result <- err
			}
			_, addr := celeristest.Serve(t, celeris.Config{Engine: celeris.EngineGnet, EventLoops: 1, MaxWorkers: 2}, func(s *celeris.Server) {
				s.GET("/ws", celeris.AdaptFunc(upgrade))
				s.GET("/block", func(c *celeris.Context) error {
					close(blocking)
					time.Sleep(300 * time.Millisecond)
					return c.String(http.StatusOK, "blocked")
				}).Inline()
				s.GET("/ok", func(c *celeris.Context) error { return c.String(http.StatusOK, "ok") })
			})
			a, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.WriteString(a, "GET /ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
				"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
			time.Sleep(50 * time.Millisecond)
			b, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			_, _ = io.WriteString(b, "GET /block HTTP/1.1\r\nHost: x\r\n\r\n")
			<-blocking
			_ = a.(*net.TCPConn).SetLinger(0)
			_ = a.Close() // RST
			close(reset)
			select {
			case err := <-result:
				t.Logf("upgrade: %v", err)
			case <-time.After(5 * time.Second):
				t.Fatal("the upgrade still waits 5 s after the client reset the connection")
			}
			resp, err := http.Get("http://" + addr + "/ok")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("after the reset: %d", resp.StatusCode)
			}
		})
	}
}
