package celeris

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestShutdownLeavesHijackedConn: a connection hijacked through Adapt has left the
// server (as under net/http): Shutdown neither waits for it nor closes it, and it
// keeps working after Shutdown returned; the handler that owns it sees
// ShuttingDown and ends it itself (guide: graceful shutdown).
func TestShutdownLeavesHijackedConn(t *testing.T) {
	for _, eng := range []Engine{EngineAuto, EngineStd} {
		t.Run(string(eng)+"engine", func(t *testing.T) {
			ended := make(chan string, 1)
			s := New(Config{Addr: "127.0.0.1:0", Engine: eng})
			s.GET("/hj", Adapt(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				nc, brw, err := w.(http.Hijacker).Hijack()
				if err != nil {
					ended <- "hijack: " + err.Error()
					return
				}
				defer nc.Close()
				_, _ = nc.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n"))
				lines := make(chan string)
				go func() {
					defer close(lines)
					for {
						l, err := brw.ReadString('\n')
						if err != nil {
							return
						}
						lines <- l
					}
				}()
				stopping := s.ShuttingDown()
				for {
					select {
					case l, ok := <-lines:
						if !ok {
							ended <- "client closed"
							return
						}
						_, _ = nc.Write([]byte("echo " + l))
						if stopping == nil { // the last line after shutdown
							ended <- "closed after shutdown"
							return
						}
					case <-stopping:
						_, _ = nc.Write([]byte("bye\n"))
						stopping = nil
					}
				}
			})))
			errc := runServer(t, s)
			nc, err := net.Dial("tcp", s.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(nc)
			_, _ = nc.Write([]byte("GET /hj HTTP/1.1\r\nHost: x\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n"))
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 101 {
				t.Fatalf("%v %v", resp, err)
			}
			_, _ = nc.Write([]byte("one\n"))
			if l, _ := br.ReadString('\n'); l != "echo one\n" {
				t.Fatalf("echo: %q", l)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if err := s.Shutdown(ctx); err != nil {
				t.Errorf("Shutdown: %v (it does not wait for a hijacked connection)", err)
			}
			if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
				t.Errorf("Start: %v", err)
			}
			if l, _ := br.ReadString('\n'); l != "bye\n" {
				t.Errorf("ShuttingDown: %q", l)
			}
			// The server has stopped; the hijacked connection still serves.
			_, _ = nc.Write([]byte("two\n"))
			if l, _ := br.ReadString('\n'); l != "echo two\n" {
				t.Errorf("after Shutdown returned: %q", l)
			}
			if got := <-ended; got != "closed after shutdown" {
				t.Errorf("handler: %s", got)
			}
		})
	}
}
