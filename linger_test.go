package celeris

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRefusalWhileClientSends: a client that keeps sending a body after the
// server refused it (413 past MaxRequestBodySize, on a route that reads it) still
// gets the answer: the server shuts its sending side down and drops the rest of
// the body for a while before it closes (a lingering close), instead of closing
// with input unread, whose reset would destroy the answer in the client's receive
// buffer before it read it. 20 rounds, so that a race shows.
func TestRefusalWhileClientSends(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{MaxRequestBodySize: 64 << 10}, func(s *Server) {
		s.POST("/read", func(c *Context) error {
			_, err := io.Copy(io.Discard, c.BodyReader())
			if err != nil {
				return err
			}
			return c.String(200, "read")
		})
	})
	chunk := "4000\r\n" + strings.Repeat("x", 0x4000) + "\r\n"
	for round := 0; round < 20; round++ {
		r := dialRaw(t, addr)
		r.send("POST /read HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
		stop := make(chan struct{})
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = r.c.SetWriteDeadline(time.Now().Add(2 * time.Second))
				if _, err := io.WriteString(r.c, chunk); err != nil {
					return
				}
			}
		}()
		resp, err := http.ReadResponse(bufio.NewReader(r.c), nil)
		close(stop)
		if err != nil {
			t.Fatalf("round %d: no answer: %v", round, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Fatalf("round %d: %d, want 413", round, resp.StatusCode)
		}
	}
	// Go's client: its Transport reports the write error ("broken pipe",
	// "connection reset") instead of the answer when the reset comes first.
	cl := h1Client()
	defer cl.CloseIdleConnections()
	for round := 0; round < 20; round++ {
		resp, err := cl.Post("http://"+addr+"/read", "application/octet-stream", unknownLength{strings.NewReader(strings.Repeat("y", 4<<20))})
		if err != nil {
			t.Fatalf("Go client, round %d: %v", round, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Fatalf("Go client, round %d: %d, want 413", round, resp.StatusCode)
		}
	}
}
