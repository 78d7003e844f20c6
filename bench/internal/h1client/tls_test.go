package h1client

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestDialTLS sends a request over TLS to a net/http test server with a
// self-signed certificate (not verified) and reads the answer.
func TestDialTLS(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "OK")
	}))
	srv.EnableHTTP2 = true // offers h2 too: DialTLS must still get http/1.1
	srv.StartTLS()
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	c, err := DialTLS(addr, Request{Method: "GET", Path: "/bench", Host: addr}, 2, 5*time.Second, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.NetConn().SetDeadline(time.Now().Add(5 * time.Second))
	got := 0
	err = c.RoundTrip(func(resp *Response, _ time.Duration) {
		if resp.Status != 200 || string(resp.Body) != "OK" {
			t.Errorf("response %d %q, want 200 OK", resp.Status, resp.Body)
		}
		got++
	})
	if err != nil || got != 2 {
		t.Fatalf("round trip: %v, %d responses, want 2", err, got)
	}
}
