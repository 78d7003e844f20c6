package websocket_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/ws"
	"github.com/celeris-dev/celeris/websocket"
)

// WebSocket applications run on the server's worker pool, so MaxWorkers bounds
// them: with its one worker held by a connection's blocking handler, a second
// connection is closed with 1013 (try again later) and its handler never runs.
// On the std engine the upgrade requests run on their connections' goroutines,
// so only the applications use the pool.
func TestWebSocketHonoursMaxWorkers(t *testing.T) {
	release := make(chan struct{})
	ran := make(chan struct{}, 2)
	_, addr := celeristest.Serve(t, celeris.Config{Engine: celeris.EngineStd, MaxWorkers: 1}, func(s *celeris.Server) {
		s.GET("/hold", websocket.Handler(nil, func(c *websocket.Conn) {
			ran <- struct{}{}
			<-release
		}))
	})
	a, resp := dial(t, addr, "/hold")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("the first handler did not run")
	}
	b, resp := dial(t, addr, "/hold")
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("second: %d", resp.StatusCode)
	}
	h, p := b.read()
	if h.Op != ws.OpClose || len(p) < 2 || int(p[0])<<8|int(p[1]) != ws.CloseTryAgainLater {
		t.Fatalf("second connection got %v %q, want close 1013", h.Op, p)
	}
	b.send(true, ws.OpClose, p[:2]) // the closing handshake's answer
	select {
	case <-ran:
		t.Fatal("a handler ran past MaxWorkers")
	case <-time.After(50 * time.Millisecond):
	}
	// Leave without a closing handshake to wait for.
	a.nc.Close()
	b.nc.Close()
	close(release)
}

// The package's close codes are the internal ones, value for value.
func TestCloseCodesMatch(t *testing.T) {
	for _, c := range []struct{ pub, internal int }{
		{websocket.CloseNormalClosure, ws.CloseNormal},
		{websocket.CloseGoingAway, ws.CloseGoingAway},
		{websocket.CloseProtocolError, ws.CloseProtocolError},
		{websocket.CloseUnsupportedData, ws.CloseUnsupportedData},
		{websocket.CloseNoStatusReceived, ws.CloseNoStatus},
		{websocket.CloseAbnormalClosure, ws.CloseAbnormal},
		{websocket.CloseInvalidPayload, ws.CloseInvalidPayload},
		{websocket.ClosePolicyViolation, ws.ClosePolicyViolation},
		{websocket.CloseMessageTooBig, ws.CloseMessageTooBig},
		{websocket.CloseInternalError, ws.CloseInternalError},
		{websocket.CloseServiceRestart, ws.CloseServiceRestart},
		{websocket.CloseTryAgainLater, ws.CloseTryAgainLater},
	} {
		if c.pub != c.internal {
			t.Errorf("%d != %d", c.pub, c.internal)
		}
	}
}

// ReadMessage reports the peer's close as a *CloseError with its code and
// reason, and an OnMessage that returns one closes with its code.
func TestCloseError(t *testing.T) {
	got := make(chan *websocket.CloseError, 1)
	addr := startServer(t, func(s *celeris.Server) {
		s.GET("/read", websocket.Handler(nil, func(c *websocket.Conn) {
			_, _, err := c.ReadMessage()
			var ce *websocket.CloseError
			if !errors.As(err, &ce) {
				ce = nil
			}
			got <- ce
		}))
		s.GET("/refuse", websocket.Events(nil, websocket.Callbacks{
			OnMessage: func(*websocket.Conn, websocket.MessageType, []byte) error {
				return &websocket.CloseError{Code: 4002, Reason: "no"}
			},
		}))
	})
	c, _ := dial(t, addr, "/read")
	c.send(true, ws.OpClose, []byte{0x0f, 0xa1, 'b', 'y', 'e'}) // 4001
	select {
	case ce := <-got:
		if ce == nil || ce.Code != 4001 || ce.Reason != "bye" {
			t.Fatalf("ReadMessage's error: %+v", ce)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadMessage did not return")
	}
	c, _ = dial(t, addr, "/refuse")
	c.send(true, ws.OpText, []byte("hi"))
	h, p := c.read()
	if h.Op != ws.OpClose || len(p) < 2 || int(p[0])<<8|int(p[1]) != 4002 {
		t.Fatalf("got %v %q, want close 4002", h.Op, p)
	}
}
