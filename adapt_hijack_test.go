package celeris

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// hijackRoutes: /hijack takes the connection over (after a pipelined answer it
// must not overtake), reads a line the client sent past the request, and answers
// it in its own protocol; /switch answers 101 first, as coder/websocket does.
func hijackRoutes(s *Server) {
	s.GET("/first", func(c *Context) error { return c.String(200, "first") })
	hj := func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/switch" {
			w.Header().Set("Upgrade", "echo")
			w.Header().Set("Connection", "Upgrade")
			w.WriteHeader(http.StatusSwitchingProtocols)
		}
		nc, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			w.WriteHeader(http.StatusTeapot)
			_, _ = io.WriteString(w, err.Error())
			return
		}
		defer nc.Close()
		line, err := brw.ReadString('\n')
		if err != nil {
			return
		}
		_, _ = brw.WriteString("echo: " + line)
		_ = brw.Flush()
	}
	s.GET("/hijack", AdaptFunc(hj))
	s.GET("/switch", AdaptFunc(hj))
	s.GET("/inline-hijack", AdaptFunc(hj)).Inline()
}

// TestAdaptHijack: http.Hijacker through Adapt on HTTP/1.1. The bytes the client
// sent past the request reach the handler's reader, an earlier pipelined answer
// comes first, and a 101 written before Hijack is sent by it.
func TestAdaptHijack(t *testing.T) {
	_, addr := startServer(t, Config{}, hijackRoutes)
	t.Run("pipelined", func(t *testing.T) {
		r := dialRaw(t, addr)
		r.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /hijack HTTP/1.1\r\nHost: x\r\n\r\nping\n")
		if resp := r.readResponse("GET"); resp.StatusCode != 200 {
			t.Fatalf("first: %d", resp.StatusCode)
		}
		line, err := r.br.ReadString('\n')
		if err != nil || line != "echo: ping\n" {
			t.Fatalf("hijacked connection said %q, %v", line, err)
		}
		if _, err := r.br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the handler closed: %v", err)
		}
	})
	t.Run("101 then hijack", func(t *testing.T) {
		r := dialRaw(t, addr)
		r.send("GET /switch HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		resp, err := http.ReadResponse(r.br, nil)
		if err != nil || resp.StatusCode != 101 || resp.Header.Get("Upgrade") != "echo" {
			t.Fatalf("switch: %v %v", resp, err)
		}
		r.send("pong\n")
		if line, err := r.br.ReadString('\n'); err != nil || line != "echo: pong\n" {
			t.Fatalf("after 101: %q %v", line, err)
		}
	})
	t.Run("inline route refuses", func(t *testing.T) {
		code, body := rawGet(t, addr, "/inline-hijack")
		if code != http.StatusTeapot || !strings.Contains(body, "inline") {
			t.Fatalf("%d %q", code, body)
		}
	})
}

// TestAdaptHijackHTTP2: as in net/http, there is nothing to hijack on HTTP/2.
func TestAdaptHijackHTTP2(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, hijackRoutes)
	for _, p := range protos {
		if !strings.Contains(p.name, "h2") {
			continue
		}
		resp, err := p.client().Get("http://" + addr + "/hijack")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(bufio.NewReader(resp.Body))
		resp.Body.Close()
		if resp.StatusCode != http.StatusTeapot || !strings.Contains(string(b), http.ErrNotSupported.Error()) {
			t.Fatalf("%s: %d %q", p.name, resp.StatusCode, b)
		}
	}
}
