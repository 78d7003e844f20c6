package websocket_test

import (
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/internal/ws"
	"github.com/celeris-dev/celeris/websocket"
)

// A route's tunnel mark (Route.ExtendedConnect) holds whatever wraps its
// handler: a user's closure around websocket.Handler serves WebSocket over
// HTTP/2 (RFC 8441) on h2c and h2, and the server advertises
// SETTINGS_ENABLE_CONNECT_PROTOCOL for it. The same wrapper on an unmarked
// route gets 405 for an extended CONNECT, and its first WebSocket over
// HTTP/1.1 is logged once, so that the missing mark is not silent.
func TestWrappedHandlerOverHTTP2(t *testing.T) {
	var calls atomic.Int32
	echo := websocket.Handler(nil, func(c *websocket.Conn) {
		for {
			mt, msg, err := c.ReadMessage()
			if err != nil || c.WriteMessage(mt, msg) != nil {
				return
			}
		}
	})
	wrap := func(c *celeris.Context) error { // a user's wrapper: logging, auth...
		calls.Add(1)
		return echo(c)
	}
	var logs testkit.Log
	cfg := celeris.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	conns := dialBoth(t, cfg, func(s *celeris.Server) {
		s.GET("/wrapped", wrap).ExtendedConnect()
		s.GET("/unmarked", wrap)
	})
	for transport, c := range conns {
		if c.settings[0x8] != 1 {
			t.Fatalf("%s: SETTINGS_ENABLE_CONNECT_PROTOCOL = %d, want 1", transport, c.settings[0x8])
		}
		c.connect(1, "localhost", "/wrapped")
		if fields, _, end := c.next(1); fields[":status"] != "200" || end {
			t.Fatalf("%s /wrapped: %v end %v, want 200 and an open stream", transport, fields, end)
		}
		st := &wsStream{c: c, id: 1}
		st.send(ws.OpText, []byte("through the wrapper"), false)
		if h, p, _ := st.read(); h.Op != ws.OpText || string(p) != "through the wrapper" {
			t.Fatalf("%s /wrapped echo: op %d %q", transport, h.Op, p)
		}
		c.connect(3, "localhost", "/unmarked")
		if fields, _, _ := c.next(3); fields[":status"] != "405" {
			t.Fatalf("%s /unmarked: %v, want 405", transport, fields)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("the wrapper ran %d times, want 2 (once per tunnel)", n)
	}
}

// TestUnmarkedWebSocketLogged: a WebSocket switched over HTTP/1.1 on a route
// without the mark is logged once per route, however many connections it
// serves.
func TestUnmarkedWebSocketLogged(t *testing.T) {
	var logs testkit.Log
	cfg := celeris.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	cfg.Engine = testEngine
	_, addr := celeristest.Serve(t, cfg, func(s *celeris.Server) {
		s.GET("/marked", websocket.Handler(nil, func(*websocket.Conn) {})).ExtendedConnect()
		s.GET("/unmarked", websocket.Handler(nil, func(*websocket.Conn) {}))
	})
	for _, path := range []string{"/marked", "/unmarked", "/unmarked"} {
		if _, resp := dial(t, addr, path); resp.StatusCode != http.StatusSwitchingProtocols {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
	}
	const line = "is not marked Route.ExtendedConnect"
	logs.Wait(t, line)
	if n := logs.Count(line); n != 1 || !strings.Contains(logs.String(), `route="GET /unmarked"`) {
		t.Fatalf("logged %d times, want once for GET /unmarked:\n%s", n, logs.String())
	}
}
