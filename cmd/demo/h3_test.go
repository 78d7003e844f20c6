package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/celeristest"
	celerish3 "github.com/celeris-dev/celeris/http3"
	"github.com/celeris-dev/celeris/internal/demo"
	"github.com/quic-go/quic-go/http3"
)

// TestDemoHTTP3: the demo with -tls-addr serves its routes over HTTP/3 on UDP
// at the TLS port (quic-go's client), and its HTTP/2 and HTTP/1.1 responses
// over TLS advertise it with Alt-Svc.
func TestDemoHTTP3(t *testing.T) {
	s, err := demo.NewTLSServer("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h3 := celerish3.Enable(s, celerish3.Config{})
	celeristest.Start(t, s)
	udp, err := h3.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	_, tlsPort, _ := strings.Cut(s.TLSAddr().String(), ":")
	_, udpPort, _ := strings.Cut(udp.String(), ":")
	if tlsPort != udpPort {
		t.Fatalf("HTTP/3 on port %s, TLS on %s", udpPort, tlsPort)
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	defer tr.Close()
	client := &http.Client{Transport: tr, Timeout: 60 * time.Second}
	base := "https://" + udp.String()
	do := func(method, path string, body io.Reader) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, body)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		if resp.ProtoMajor != 3 {
			t.Fatalf("%s %s over %s", method, path, resp.Proto)
		}
		return resp, b
	}
	for _, tc := range []struct{ path, want string }{
		{path: "/bench", want: "OK"},
		{path: "/json", want: `{"message":"Hello, World!"}`},
		{path: "/users/7/posts/9", want: "user=7 post=9"},
		{path: "/nethttp/hello", want: "hello from net/http"},
	} {
		if resp, b := do("GET", tc.path, nil); resp.StatusCode != 200 || string(b) != tc.want || resp.Header.Get("X-Request-Id") == "" {
			t.Fatalf("GET %s: %d %q %v", tc.path, resp.StatusCode, b, resp.Header)
		}
	}
	if resp, b := do("POST", "/upload", bytes.NewReader(make([]byte, 3<<20))); resp.StatusCode != 200 || !strings.Contains(string(b), strconv.Itoa(3<<20)) {
		t.Fatalf("upload: %d %q", resp.StatusCode, b)
	}
	if resp, b := do("GET", "/download?size="+strconv.Itoa(64<<20), nil); resp.StatusCode != 200 || len(b) != 64<<20 || resp.ContentLength != 64<<20 {
		t.Fatalf("download: %d, %d bytes", resp.StatusCode, len(b))
	}
	if resp, b := do("GET", "/sse", nil); resp.StatusCode != 200 || strings.Count(string(b), "data:") != 5 {
		t.Fatalf("sse: %d %q", resp.StatusCode, b)
	}
	if resp, b := do("GET", "/stream?n=3", nil); resp.StatusCode != 200 || len(b) != 3<<10 {
		t.Fatalf("stream: %d, %d bytes", resp.StatusCode, len(b))
	}
	if resp, _ := do("GET", "/panic", nil); resp.StatusCode != 500 {
		t.Fatalf("panic: %d", resp.StatusCode)
	}
	// /slow cancelled by the client: its handler returns at once (it watches
	// the request context), so no request stays active.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/slow?ms=10000", nil)
	start := time.Now()
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("/slow answered before the client gave up")
	}
	cancel()
	for s.Stats().ActiveRequests != 0 {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the cancelled /slow handler still runs")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Alt-Svc on the TLS listener's responses.
	want := `h3=":` + udpPort + `"; ma=86400`
	for _, h2 := range []bool{true, false} {
		tt := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: h2}
		if !h2 {
			tt.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		resp, err := (&http.Client{Transport: tt}).Get("https://" + s.TLSAddr().String() + "/bench")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		tt.CloseIdleConnections()
		if got := resp.Header.Get("Alt-Svc"); got != want {
			t.Fatalf("%s: Alt-Svc %q, want %q", resp.Proto, got, want)
		}
	}
}
