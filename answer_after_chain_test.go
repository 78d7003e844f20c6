package celeris

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestAnswerLeavesAfterTheChainReturns: a complete answer (String, JSON, Blob)
// reaches the client once the handler and its middleware returned, on HTTP/1.1
// and on HTTP/2, as net/http flushes its buffer when the handler returns: what a
// middleware does after next (saving a session, committing a transaction,
// writing a log record) is done before the client can send its next request.
func TestAnswerLeavesAfterTheChainReturns(t *testing.T) {
	proceed := make(chan struct{}, 1)
	after := make(chan string, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.Use(func(next HandlerFunc) HandlerFunc {
			return func(c *Context) error {
				err := next(c)
				<-proceed                        // the answer is written; the chain goes on
				after <- strings.Clone(c.Path()) // the Context's strings live as long as the request
				return err
			}
		})
		s.GET("/a", func(c *Context) error { return c.String(200, "answered") })
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		got := make(chan string, 1)
		go func() {
			resp, err := cl.Get("http://" + addr + "/a")
			if err != nil {
				got <- err.Error()
				return
			}
			got <- bodyString(t, resp)
		}()
		select {
		case b := <-got:
			t.Fatalf("the client had the answer (%q) while the middleware still ran", b)
		case <-time.After(200 * time.Millisecond):
		}
		proceed <- struct{}{}
		select {
		case b := <-got:
			if b != "answered" {
				t.Fatalf("body %q", b)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no answer after the middleware returned")
		}
		if p := <-after; p != "/a" {
			t.Fatalf("middleware saw %q", p)
		}
	})
}
