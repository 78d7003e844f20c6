package websocket_test

import (
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
	defer close(release)
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
	select {
	case <-ran:
		t.Fatal("a handler ran past MaxWorkers")
	case <-time.After(50 * time.Millisecond):
	}
	_ = a
}
