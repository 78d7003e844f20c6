package celeris

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestContextBuffer: a body built in Context.Buffer reaches the client over every
// protocol, safe and inline, and concurrent requests never see each other's bytes
// (each Context has its own buffer, emptied by every call).
func TestContextBuffer(t *testing.T) {
	t.Parallel()
	build := func(c *Context) error {
		b := c.Buffer()
		b.WriteString("stale") // a second Buffer call starts empty
		b = c.Buffer()
		b.WriteString("user=")
		b.WriteString(c.Param("id"))
		b.WriteString(" ")
		b.WriteString(strings.Repeat("x", len(c.Param("id"))*100)) // grows past the first capacity
		return c.Blob(http.StatusOK, "text/plain; charset=utf-8", b.Bytes())
	}
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/safe/:id", build)
		s.GET("/inline/:id", build).Inline()
	})
	forEachProto(t, func(t *testing.T, c *http.Client, proto string) {
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 25; i++ {
					id := fmt.Sprint(g*1000 + i)
					for _, mode := range []string{"safe", "inline"} {
						resp, err := c.Get("http://" + addr + "/" + mode + "/" + id)
						if err != nil {
							t.Error(err)
							return
						}
						body, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						want := "user=" + id + " " + strings.Repeat("x", len(id)*100)
						if string(body) != want {
							t.Errorf("%s %s: body %q, want %q", proto, mode, body, want)
							return
						}
					}
				}
			}()
		}
		wg.Wait()
	})
}
