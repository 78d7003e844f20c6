package celeris

import (
	"math/rand"
	"testing"
)

// RFC 9112 §3: method = token. A request line whose method is not a token is
// malformed: 400 and the connection closes, whatever follows it (random binary
// bytes included). A well-formed method token that no route implements gets 501
// and the connection serves on; one longer than any method may be gets 501 at
// once, before its request line ends.
func TestMethodTokenValidation(t *testing.T) {
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/bench", func(c *Context) error { return c.String(200, "OK") })
	})
	rng := rand.New(rand.NewSource(1))
	for i := range 8 {
		b := make([]byte, 512)
		rng.Read(b)
		rc := dialRaw(t, addr)
		rc.send(string(b) + "\r\n\r\n")
		resp := rc.readResponse("GET")
		if resp.StatusCode != 400 {
			t.Fatalf("random bytes %d (%q...): status %d, want 400", i, b[:8], resp.StatusCode)
		}
		rc.expectClosed()
	}
	tests := []struct {
		name   string
		line   string
		status int
		closes bool
	}{
		{name: "control byte in method", line: "G\x01T /bench HTTP/1.1", status: 400, closes: true},
		{name: "non-ASCII method", line: "\xc3\xa9T /bench HTTP/1.1", status: 400, closes: true},
		{name: "separator in method", line: "GE(T) /bench", status: 400, closes: true},
		{name: "binary method, no version", line: "\x00\x01\x02", status: 400, closes: true},
		{name: "method no route implements", line: "BREWCOFFEE /bench HTTP/1.1", status: 501},
		{name: "method the path does not serve", line: "BREW /bench HTTP/1.1", status: 405},
		{name: "method too long", line: "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJ /bench HTTP/1.1", status: 501, closes: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := dialRaw(t, addr)
			rc.send(tt.line + "\r\nHost: x\r\n\r\n")
			resp := rc.readResponse("GET")
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.closes {
				rc.expectClosed()
				return
			}
			rc.send("GET /bench HTTP/1.1\r\nHost: x\r\n\r\n")
			if resp := rc.readResponse("GET"); resp.StatusCode != 200 {
				t.Fatalf("next request: %d", resp.StatusCode)
			}
		})
	}
}
