package compress_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/compress"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

// TestStreamPerFlush: a streamed response and an SSE stream are gzipped as they
// are written, and each flush reaches the client as data it decodes at once: the
// handler writes its second piece only after the client decoded the first, so a
// middleware that held the output until the end would time out. Over h1 and h2c.
func TestStreamPerFlush(t *testing.T) {
	first := strings.Repeat("first piece of a streamed answer. ", 20)
	second := strings.Repeat("second piece. ", 20)
	decoded := make(chan struct{}, 1)
	waitClient := func(c *celeris.Context) bool {
		select {
		case <-decoded:
			return true
		case <-time.After(5 * time.Second):
			return false
		case <-c.Context().Done():
			return false
		}
	}
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(compress.Default())
		s.GET("/stream", func(c *celeris.Context) error {
			c.SetHeader("ETag", `"s1"`)
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			if _, err := io.WriteString(w, first); err != nil {
				return err
			}
			if err := w.Flush(); err != nil {
				return err
			}
			if !waitClient(c) {
				return nil // the client saw nothing: it fails
			}
			_, err = io.WriteString(w, second)
			return err
		})
		s.GET("/sse", func(c *celeris.Context) error {
			w, err := c.SSE()
			if err != nil {
				return err
			}
			if err := w.Send(celeris.Event{Data: "one"}); err != nil {
				return err
			}
			if !waitClient(c) {
				return nil
			}
			return w.Send(celeris.Event{Data: "two"})
		})
		s.GET("/inline", func(c *celeris.Context) error {
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			for range 3 {
				if _, err := io.WriteString(w, text); err != nil {
					return err
				}
				if err := w.Flush(); err != nil {
					return err
				}
			}
			return nil
		}).Inline()
		s.GET("/range", func(c *celeris.Context) error {
			c.SetHeader("Content-Range", "bytes 0-99/1000")
			w, err := c.Stream(http.StatusPartialContent, "text/plain")
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, strings.Repeat("r", 100))
			return err
		})
		s.GET("/png", func(c *celeris.Context) error {
			w, err := c.Stream(200, "image/png")
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, text)
			return err
		})
		s.GET("/sized", func(c *celeris.Context) error {
			w, err := c.StreamLength(200, "text/plain", int64(len(text)))
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, text)
			return err
		})
	})
	gz := mwtest.H("Accept-Encoding", "gzip")
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, tc := range []struct{ path, first, second string }{
			{path: "/stream", first: first, second: second},
			{path: "/sse", first: "data: one\n\n", second: "data: two\n\n"},
		} {
			req, _ := http.NewRequest("GET", "http://"+addr+tc.path, nil)
			req.Header = gz
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
				resp.Body.Close()
				t.Fatalf("%s: headers %v", tc.path, resp.Header)
			}
			if tc.path == "/stream" && resp.Header.Get("ETag") != `W/"s1"` {
				t.Errorf("%s: ETag %q, want the weak tag", tc.path, resp.Header.Get("ETag"))
			}
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				resp.Body.Close()
				t.Fatalf("%s: %v", tc.path, err)
			}
			got := make([]byte, len(tc.first))
			if _, err := io.ReadFull(zr, got); err != nil || string(got) != tc.first {
				resp.Body.Close()
				t.Fatalf("%s: first flush: %q, %v", tc.path, got, err)
			}
			decoded <- struct{}{} // the handler may write the second piece now
			rest, err := io.ReadAll(zr)
			resp.Body.Close()
			if err != nil || string(rest) != tc.second {
				t.Fatalf("%s: after the first flush: %q, %v", tc.path, rest, err)
			}
		}
		// An Inline route's stream is encoded on the event loop alike.
		resp, body := mwtest.Get(t, client, "http://"+addr+"/inline", gz)
		if resp.Header.Get("Content-Encoding") != "gzip" || gunzip(t, body) != strings.Repeat(text, 3) {
			t.Errorf("inline stream: %v, %d bytes", resp.Header, len(body))
		}
		// Range answers, already-compressed types and streams of a declared
		// length go out as written.
		for _, tc := range []struct {
			path   string
			status int
			body   string
		}{
			{path: "/range", status: 206, body: strings.Repeat("r", 100)},
			{path: "/png", status: 200, body: text},
			{path: "/sized", status: 200, body: text},
		} {
			resp, body := mwtest.Get(t, client, "http://"+addr+tc.path, gz)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Encoding") != "" || body != tc.body {
				t.Errorf("%s: %d %q, %d bytes", tc.path, resp.StatusCode, resp.Header.Get("Content-Encoding"), len(body))
			}
		}
	})
}
