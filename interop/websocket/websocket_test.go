// Package websocket runs the WebSocket libraries Go users already have against
// Celeris: gorilla/websocket and coder/websocket servers mounted with
// celeris.Adapt (Hijack and 101 through Adapt), and their clients against the
// native websocket package. A module of its own: the core never depends on them.
package websocket

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	coder "github.com/coder/websocket"
	"github.com/gorilla/websocket"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	cws "github.com/celeris-dev/celeris/websocket"
)

func startServer(t *testing.T, register func(s *celeris.Server)) string {
	t.Helper()
	_, addr := celeristest.Serve(t, celeris.Config{}, register)
	return addr
}

// gorillaEcho is a gorilla/websocket echo server as its users write it.
func gorillaEcho(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{}
	c, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	for {
		mt, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		if err := c.WriteMessage(mt, msg); err != nil {
			return
		}
	}
}

// coderEcho is a coder/websocket echo server as its users write it.
func coderEcho(w http.ResponseWriter, r *http.Request) {
	c, err := coder.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	ctx := r.Context()
	for {
		mt, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		if err := c.Write(ctx, mt, msg); err != nil {
			return
		}
	}
}

func routes(s *celeris.Server) {
	s.GET("/gorilla", celeris.AdaptFunc(gorillaEcho))
	s.GET("/coder", celeris.AdaptFunc(coderEcho))
	s.GET("/native", cws.Events(nil, cws.Callbacks{OnMessage: func(c *cws.Conn, t cws.MessageType, msg []byte) error {
		return c.WriteMessage(t, msg)
	}}))
	s.GET("/plain", func(c *celeris.Context) error { return c.String(200, "plain") })
}

var messages = [][]byte{[]byte("hello"), bytes.Repeat([]byte("ab"), 40000), {}}

// TestGorillaClient: gorilla's client against each server.
func TestGorillaClient(t *testing.T) {
	addr := startServer(t, routes)
	for _, path := range []string{"/gorilla", "/coder", "/native"} {
		t.Run(path, func(t *testing.T) {
			c, resp, err := websocket.DefaultDialer.Dial("ws://"+addr+path, nil)
			if err != nil {
				t.Fatalf("dial: %v (%v)", err, resp)
			}
			defer c.Close()
			for i, m := range messages {
				mt := websocket.TextMessage
				if i%2 == 1 {
					mt = websocket.BinaryMessage
				}
				if err := c.WriteMessage(mt, m); err != nil {
					t.Fatal(err)
				}
				gt, got, err := c.ReadMessage()
				if err != nil || gt != mt || !bytes.Equal(got, m) {
					t.Fatalf("echo %d: %d %d bytes %v", i, gt, len(got), err)
				}
			}
			if err := c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1000, "bye")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := c.ReadMessage(); !websocket.IsCloseError(err, 1000) {
				t.Fatalf("after close: %v", err)
			}
		})
	}
	// The connection's neighbours keep working over HTTP.
	resp, err := http.Get("http://" + addr + "/plain")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("plain: %v %v", resp, err)
	}
	resp.Body.Close()
}

// TestCoderClient: coder's client against each server.
func TestCoderClient(t *testing.T) {
	addr := startServer(t, routes)
	for _, path := range []string{"/gorilla", "/coder", "/native"} {
		t.Run(path, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, _, err := coder.Dial(ctx, "ws://"+addr+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			c.SetReadLimit(1 << 20)
			for i, m := range messages {
				mt := coder.MessageText
				if i%2 == 1 {
					mt = coder.MessageBinary
				}
				if err := c.Write(ctx, mt, m); err != nil {
					t.Fatal(err)
				}
				gt, got, err := c.Read(ctx)
				if err != nil || gt != mt || !bytes.Equal(got, m) {
					t.Fatalf("echo %d: %v %d bytes %v", i, gt, len(got), err)
				}
			}
			if err := c.Close(coder.StatusNormalClosure, "bye"); err != nil && !strings.Contains(err.Error(), "close") {
				t.Fatalf("close: %v", err)
			}
		})
	}
}
