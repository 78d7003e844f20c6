package websocket_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/ws"
	"github.com/celeris-dev/celeris/websocket"
)

// TestGracefulShutdownClosingHandshake: with WebSockets open, a graceful shutdown
// sends each a close frame (1001, going away) and completes the closing handshake
// as soon as the client answers (RFC 6455 §7.1.1-2): the server closes the TCP
// connection at once, OnClose (or ReadMessage) sees the client's code, not 1006,
// and Shutdown returns well within its timeout (3 s, as StartGraceful(3*time.Second)
// gets), on both engines (CELERIS_TEST_ENGINE=std).
func TestGracefulShutdownClosingHandshake(t *testing.T) {
	gracefulWebSockets(t, func(s *celeris.Server) (start func() error, stop func() error) {
		errc := make(chan error, 1)
		start = func() error {
			go func() { errc <- s.Start() }()
			return nil
		}
		stop = func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			err := s.Shutdown(ctx)
			if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
				return serr
			}
			return err
		}
		return start, stop
	})
}

// gracefulWebSockets opens a WebSocket to an Events and to a Handler route, runs
// stop (a graceful shutdown with a 3 s timeout) while each client answers the
// server's close 1001 with its own code, and checks that stop returned nil within
// 2 s, the connections closed, and the application saw the clients' codes.
func gracefulWebSockets(t *testing.T, run func(s *celeris.Server) (start func() error, stop func() error)) {
	var events, handler atomic.Int64
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", Engine: testEngine, EventLoops: 2})
	s.GET("/events", websocket.Events(nil, websocket.Callbacks{
		OnClose: func(c *websocket.Conn, code int, reason string) { events.Store(int64(code)) },
	}))
	s.GET("/handler", websocket.Handler(nil, func(c *websocket.Conn) {
		for {
			_, _, err := c.ReadMessage()
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				handler.Store(int64(ce.Code))
			}
			if err != nil {
				return
			}
		}
	}))
	start, stop := run(s)
	if err := start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Ready():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not start")
	}
	addr := s.Addr().String()
	clients := []*client{}
	for _, path := range []string{"/events", "/handler"} {
		c, resp := dial(t, addr, path)
		if resp.StatusCode != 101 {
			t.Fatalf("%s: handshake %d", path, resp.StatusCode)
		}
		clients = append(clients, c)
	}
	// Each client answers the server's close frame with its own code.
	answered := make(chan error, len(clients))
	for i, c := range clients {
		go func() {
			h, p := c.read()
			if h.Op != ws.OpClose || len(p) < 2 || int(p[0])<<8|int(p[1]) != ws.CloseGoingAway {
				answered <- errors.New("no close frame with 1001")
				return
			}
			code := 4000 + i
			c.send(true, ws.OpClose, []byte{byte(code >> 8), byte(code)})
			_ = c.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err := io.Copy(io.Discard, c.br)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				err = errors.New("the server did not close the TCP connection after the closing handshake")
			}
			answered <- err
		}()
	}
	began := time.Now()
	if err := stop(); err != nil {
		t.Fatalf("graceful shutdown after %v: %v", time.Since(began), err)
	}
	if d := time.Since(began); d > 2*time.Second {
		t.Errorf("graceful shutdown took %v: it waited for more than the clients' answers", d)
	}
	for range clients {
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
	}
	if got := events.Load(); got != 4000 {
		t.Errorf("OnClose saw %d, want the client's 4000", got)
	}
	if got := handler.Load(); got != 4001 {
		t.Errorf("ReadMessage saw close %d, want the client's 4001", got)
	}
}
