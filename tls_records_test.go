package celeris

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// recordConn counts the TLS records that arrive on a connection (the server's
// side of the stream, read by the client's crypto/tls through it).
type recordConn struct {
	net.Conn
	records atomic.Int64
	hdr     [5]byte
	nhdr    int // bytes of hdr seen
	left    int // bytes of the current record's payload still to come
}

func (c *recordConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	for b := p[:n]; len(b) > 0; {
		if c.left > 0 {
			k := min(c.left, len(b))
			c.left -= k
			b = b[k:]
			continue
		}
		k := copy(c.hdr[c.nhdr:], b)
		c.nhdr += k
		b = b[k:]
		if c.nhdr == len(c.hdr) {
			c.nhdr = 0
			c.left = int(c.hdr[3])<<8 | int(c.hdr[4])
			c.records.Add(1)
		}
	}
	return n, err
}

// Over TLS an HTTP/1.1 response leaves as one record: the head and the body are
// encrypted together (one tls.Conn.Write per batch), never a record for each, on
// a worker, inline, through middleware that adds headers, and for a JSON body.
// A second record per response costs a second AEAD seal and 22 bytes more, and
// sends the head alone in its own segment where the body follows late.
func TestTLSOneRecordPerResponse(t *testing.T) {
	_, _, secure := startTLSServer(t, Config{}, func(s *Server) {
		s.Use(func(next HandlerFunc) HandlerFunc {
			return func(c *Context) error {
				c.SetHeader("X-Request-ID", "0123456789abcdef-1")
				c.SetHeader("Vary", "Accept-Encoding")
				return next(c)
			}
		})
		s.GET("/bench", func(c *Context) error { return c.String(200, "OK") })
		s.GET("/inline", func(c *Context) error { return c.String(200, "OK") }).Inline()
		s.GET("/json", func(c *Context) error {
			return c.JSON(200, map[string]string{"message": "Hello, World!"})
		})
		s.GET("/users/:id/posts/:post", func(c *Context) error {
			return c.String(200, "user="+c.Param("id")+" post="+c.Param("post"))
		})
	})
	for _, tc := range []struct {
		name, path, body string
	}{
		{name: "worker", path: "/bench", body: "OK"},
		{name: "inline", path: "/inline", body: "OK"},
		{name: "json", path: "/json", body: `{"message":"Hello, World!"}`},
		{name: "params", path: "/users/42/posts/7", body: "user=42 post=7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var conns []*recordConn
			tr := &http.Transport{
				TLSClientConfig: &tls.Config{RootCAs: testCert().Pool(), ServerName: "localhost", NextProtos: []string{"http/1.1"}},
				TLSNextProto:    map[string]func(string, *tls.Conn) http.RoundTripper{},
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
					if err != nil {
						return nil, err
					}
					rc := &recordConn{Conn: nc}
					conns = append(conns, rc)
					return rc, nil
				},
			}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
			get := func() {
				t.Helper()
				resp, err := client.Get("https://" + secure + tc.path)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 || string(b) != tc.body {
					t.Fatalf("%d %q %v, want 200 %q", resp.StatusCode, b, err, tc.body)
				}
			}
			// The first response follows the handshake and, in TLS 1.3, the
			// session tickets: count from the second on.
			get()
			if len(conns) != 1 {
				t.Fatalf("%d connections, want 1", len(conns))
			}
			before := conns[0].records.Load()
			const n = 20
			for range n {
				get()
			}
			if len(conns) != 1 {
				t.Fatalf("%d connections, want 1 (keep-alive)", len(conns))
			}
			if got := conns[0].records.Load() - before; got != n {
				t.Fatalf("%d records for %d responses, want one each", got, n)
			}
		})
	}
}
