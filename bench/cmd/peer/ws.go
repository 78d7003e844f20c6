package main

// The WebSocket peers: each echoes every message of GET /ws/echo (RFC 6455,
// no compression) in the way its documentation shows, one goroutine per
// connection, whole messages (read one, write it back), binary or text as
// received, messages up to maxWSMessage (the demo's bound). gorilla and coder
// run on net/http, fasthttp-ws on fasthttp, gobwas on a bare listener (its
// zero-copy upgrade, no net/http), celeris-blocking on Celeris with
// websocket.Handler. Except gobwas, they also serve GET /bench.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"

	"github.com/celeris-dev/celeris"
	cws "github.com/celeris-dev/celeris/websocket"
	coder "github.com/coder/websocket"
	fastws "github.com/fasthttp/websocket"
	"github.com/gobwas/ws"
	gorilla "github.com/gorilla/websocket"
	"github.com/valyala/fasthttp"
)

// maxWSMessage bounds a message, as cmd/demo does for /ws/echo.
const maxWSMessage = 64 << 20

const wsPath = "/ws/echo"

func benchRoute(mux *http.ServeMux) {
	mux.HandleFunc("GET /bench", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", textPlain)
		io.WriteString(w, "OK")
	})
}

// gorillaHandler: gorilla/websocket's Upgrader with its defaults (the
// hijacked net/http buffers are reused), ReadMessage and WriteMessage.
func gorillaHandler() http.Handler {
	up := gorilla.Upgrader{}
	mux := http.NewServeMux()
	benchRoute(mux)
	mux.HandleFunc("GET "+wsPath, func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade answered the error
		}
		defer c.Close()
		c.SetReadLimit(maxWSMessage)
		for {
			t, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(t, msg); err != nil {
				return
			}
		}
	})
	return mux
}

// coderHandler: coder/websocket's Accept without compression, Read and Write.
func coderHandler() http.Handler {
	mux := http.NewServeMux()
	benchRoute(mux)
	mux.HandleFunc("GET "+wsPath, func(w http.ResponseWriter, r *http.Request) {
		c, err := coder.Accept(w, r, &coder.AcceptOptions{CompressionMode: coder.CompressionDisabled})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(maxWSMessage)
		ctx := context.Background()
		for {
			t, msg, err := c.Read(ctx)
			if err != nil {
				return
			}
			if err := c.Write(ctx, t, msg); err != nil {
				return
			}
		}
	})
	return mux
}

// fastwsServer: fasthttp/websocket (what Fiber's websocket middleware wraps)
// on fasthttp; the other paths go to the fasthttp peer's handler.
func newFastwsServer() server {
	up := fastws.FastHTTPUpgrader{}
	echo := func(c *fastws.Conn) {
		c.SetReadLimit(maxWSMessage)
		for {
			t, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if err := c.WriteMessage(t, msg); err != nil {
				return
			}
		}
	}
	h := func(ctx *fasthttp.RequestCtx) {
		if string(ctx.Path()) == wsPath {
			up.Upgrade(ctx, echo) // answers errors itself
			return
		}
		fasthttpHandler(ctx)
	}
	return &fasthttpServer{srv: &fasthttp.Server{Handler: h, Name: "fasthttp"}}
}

// gobwasServer: gobwas/ws's zero-copy upgrade on a bare listener, then its
// low-level API: ReadHeader from a 4 KiB bufio.Reader, payloads read into a
// buffer kept per connection, the echo written as header plus payload in one
// write. (gobwas can also run without a goroutine per idle connection, on
// an epoll library such as mailru/easygo; not measured here.)
type gobwasServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func newGobwasServer() server { return &gobwasServer{conns: map[net.Conn]struct{}{}} }

func (s *gobwasServer) serve(ln net.Listener) error {
	s.ln = ln
	up := ws.Upgrader{
		OnRequest: func(uri []byte) error {
			if string(uri) != wsPath {
				return ws.RejectConnectionError(ws.RejectionStatus(http.StatusNotFound))
			}
			return nil
		},
	}
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		s.mu.Lock()
		s.conns[conn] = struct{}{}
		s.mu.Unlock()
		go func() {
			defer func() {
				s.mu.Lock()
				delete(s.conns, conn)
				s.mu.Unlock()
				conn.Close()
			}()
			if _, err := up.Upgrade(conn); err != nil {
				return
			}
			gobwasEcho(conn)
		}()
	}
}

func gobwasEcho(conn net.Conn) {
	br := bufio.NewReaderSize(conn, 4096)
	var msg []byte
	var out bytes.Buffer
	var op ws.OpCode
	for {
		h, err := ws.ReadHeader(br)
		if err != nil {
			return
		}
		if !h.Masked {
			ws.WriteFrame(conn, ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusProtocolError, "unmasked frame")))
			return
		}
		if h.OpCode.IsControl() {
			p := make([]byte, h.Length)
			if _, err := io.ReadFull(br, p); err != nil {
				return
			}
			ws.Cipher(p, h.Mask, 0)
			switch h.OpCode {
			case ws.OpClose:
				ws.WriteFrame(conn, ws.NewCloseFrame(p))
				return
			case ws.OpPing:
				if ws.WriteFrame(conn, ws.NewPongFrame(p)) != nil {
					return
				}
			}
			continue
		}
		if int64(len(msg))+h.Length > maxWSMessage {
			ws.WriteFrame(conn, ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusMessageTooBig, "")))
			return
		}
		if h.OpCode != ws.OpContinuation {
			op, msg = h.OpCode, msg[:0]
		}
		n := len(msg)
		msg = slices.Grow(msg, int(h.Length))[:n+int(h.Length)]
		if _, err := io.ReadFull(br, msg[n:]); err != nil {
			return
		}
		ws.Cipher(msg[n:], h.Mask, 0)
		if !h.Fin {
			continue
		}
		out.Reset()
		if ws.WriteHeader(&out, ws.Header{Fin: true, OpCode: op, Length: int64(len(msg))}) != nil {
			return
		}
		out.Write(msg)
		if _, err := conn.Write(out.Bytes()); err != nil {
			return
		}
		msg = msg[:0]
	}
}

func (s *gobwasServer) shutdown(context.Context) error {
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	return err
}

// celerisBlocking is Celeris with websocket.Handler: a goroutine (worker) per
// connection reading with ReadMessage, as with gorilla. It binds its address
// itself (gnet listens), so it implements addrServer.
type celerisBlocking struct {
	s *celeris.Server
}

func newCelerisBlocking() server { return &celerisBlocking{} }

func (c *celerisBlocking) listenAndServe(addr string) error {
	c.s = celeris.New(celeris.Config{Addr: addr, EventLoops: runtime.GOMAXPROCS(0)})
	c.s.GET("/bench", func(ctx *celeris.Context) error { return ctx.String(http.StatusOK, "OK") })
	c.s.GET(wsPath, cws.Handler(&cws.Config{MaxMessageSize: maxWSMessage}, func(conn *cws.Conn) {
		for {
			t, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if err := conn.WriteMessage(t, msg); err != nil {
				return
			}
		}
	}))
	if err := c.s.Start(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (c *celerisBlocking) serve(net.Listener) error {
	return errors.New("celeris-blocking listens itself (addrServer)")
}

func (c *celerisBlocking) shutdown(ctx context.Context) error {
	if c.s == nil {
		return nil
	}
	return c.s.Shutdown(ctx)
}
