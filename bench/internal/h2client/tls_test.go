package h2client

import (
	"io"
	"log"
	"net/http/httptest"
	"testing"
	"time"
)

// TestTLS talks h2 over TLS (ALPN h2) to a net/http test server with a
// self-signed certificate, and is refused by one that offers only http/1.1.
func TestTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(testHandler())
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	c, err := Dial(addr, Options{TLS: true, Capture: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	resp, err := c.Do(&Request{Method: "GET", Path: "/bench", Authority: addr})
	if err != nil || resp.Status != 200 || string(resp.Body) != "OK" {
		t.Fatalf("GET /bench over h2: %v, %+v", err, resp)
	}

	h1 := httptest.NewUnstartedServer(testHandler()) // ALPN http/1.1 only
	h1.Config.ErrorLog = log.New(io.Discard, "", 0)
	h1.StartTLS()
	defer h1.Close()
	if _, err := Dial(h1.Listener.Addr().String(), Options{TLS: true, Timeout: 5 * time.Second}); err == nil {
		t.Fatal("dial to an http/1.1-only server succeeded, want an error (no h2 by ALPN)")
	}
}
