package demo

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/h2raw"
)

func startDemo(t *testing.T, inline bool) string {
	return startDemoMode(t, inline, false)
}

func startDemoMode(t *testing.T, inline, bare bool) string {
	t.Helper()
	return "http://" + celeristest.Start(t, newServer("127.0.0.1:0", 2, inline, bare))
}

func clients() map[string]*http.Client {
	h1 := &http.Transport{DisableCompression: true}
	h1.Protocols = new(http.Protocols)
	h1.Protocols.SetHTTP1(true)
	h2 := &http2.Transport{
		AllowHTTP:          true,
		DisableCompression: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}
	return map[string]*http.Client{
		"h1":  {Transport: h1, Timeout: 30 * time.Second},
		"h2c": {Transport: h2, Timeout: 30 * time.Second},
	}
}

// TestDemoContract checks every route of the demo contract over HTTP/1.1 and h2c,
// in safe and inline mode.
func TestDemoContract(t *testing.T) {
	t.Parallel()
	for _, inline := range []bool{false, true} {
		base := startDemo(t, inline)
		for name, client := range clients() {
			t.Run(name+map[bool]string{true: "-inline", false: ""}[inline], func(t *testing.T) {
				checkContract(t, base, client)
			})
		}
	}
}

// checkContract checks every route of the demo contract through client.
func checkContract(t *testing.T, base string, client *http.Client) {
	get := func(path string, hdr ...string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("GET %s body: %v", path, err)
		}
		if resp.Header.Get("X-Request-ID") == "" {
			t.Errorf("GET %s: no X-Request-ID", path)
		}
		return resp, b
	}
	expect := func(path string, status int, body, ctype string) {
		t.Helper()
		resp, b := get(path)
		if resp.StatusCode != status || (body != "" && string(b) != body) {
			t.Errorf("GET %s: %d %q, want %d %q", path, resp.StatusCode, b, status, body)
		}
		if ctype != "" && !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) {
			t.Errorf("GET %s: Content-Type %q", path, resp.Header.Get("Content-Type"))
		}
	}
	expect("/bench", 200, "OK", "text/plain")
	expect("/json", 200, `{"message":"Hello, World!"}`, "application/json")
	expect("/users/12/posts/34", 200, "user=12 post=34", "text/plain")
	expect("/slow?ms=10", 200, "OK", "")
	expect("/slow?ms=abc", 400, "", "")
	expect("/download?size=-1", 400, "", "")
	expect("/download?size=x", 400, "", "")
	expect("/panic", 500, "", "")
	expect("/bench", 200, "OK", "")
	expect("/nethttp/hello", 200, "hello from net/http", "")
	for _, n := range []int{0, 1000, 1000000} {
		resp, b := get("/download?size=" + strconv.Itoa(n))
		if len(b) != n || resp.ContentLength != int64(n) || len(resp.TransferEncoding) != 0 || bytes.Count(b, []byte{0}) != n {
			t.Errorf("download %d: %d bytes, Content-Length %d, Transfer-Encoding %v", n, len(b), resp.ContentLength, resp.TransferEncoding)
		}
	}
	if _, b := get("/stream?n=5"); len(b) != 5*1024 {
		t.Errorf("stream: %d bytes", len(b))
	}
	resp, b := get("/sse")
	if resp.Header.Get("Content-Type") != "text/event-stream" || strings.Count(string(b), "data: ") != 5 {
		t.Errorf("sse: %q %q", resp.Header.Get("Content-Type"), b)
	}
	resp, b = get("/json", "Accept-Encoding", "gzip")
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("json gzip: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	} else if zr, err := gzip.NewReader(bytes.NewReader(b)); err != nil {
		t.Error(err)
	} else if plain, _ := io.ReadAll(zr); string(plain) != `{"message":"Hello, World!"}` {
		t.Errorf("json gunzipped: %q", plain)
	}
	req, _ := http.NewRequest("OPTIONS", base+"/json", nil)
	req.Header.Set("Origin", "http://example.com")
	req.Header.Set("Access-Control-Request-Method", "GET")
	if resp, err := client.Do(req); err != nil || resp.StatusCode/100 != 2 || resp.Header.Get("Access-Control-Allow-Origin") == "" {
		t.Errorf("preflight: %v %v", resp, err)
	}
	// OPTIONS on a path with routes but no OPTIONS handler: 204 with Allow.
	req, _ = http.NewRequest("OPTIONS", base+"/bench", nil)
	if resp, err := client.Do(req); err != nil {
		t.Errorf("OPTIONS /bench: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != 204 || resp.Header.Get("Allow") != "GET, HEAD, OPTIONS" || resp.Header.Get("X-Request-ID") == "" {
			t.Errorf("OPTIONS /bench: %d Allow %q, want 204 \"GET, HEAD, OPTIONS\" with X-Request-ID", resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	up := bytes.Repeat([]byte("x"), 3<<20)
	resp, err := client.Post(base+"/upload", "application/octet-stream", bytes.NewReader(up))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "3145728" {
		t.Errorf("upload: %q", b)
	}
	_, b = get("/metrics")
	if !strings.Contains(string(b), "celeris_http_requests_total") {
		t.Errorf("metrics: %q", b)
	}
}

// TestDemoRefusalsCarryRequestID: "every response carries X-Request-ID" holds for
// the requests the protocol layer refuses before any middleware runs.
func TestDemoRefusalsCarryRequestID(t *testing.T) {
	t.Parallel()
	addr := strings.TrimPrefix(startDemo(t, false), "http://")
	for _, tt := range []struct {
		req    string
		status int
	}{
		{"GET /bench HTTP/1.1\r\n\r\n", 400},
		{"GET /bench HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("b", 70<<10) + "\r\n\r\n", 431},
		{"GET /bench HTTP/1.2\r\nHost: x\r\n\r\n", 505},
		{"POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
	} {
		nc, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(nc, tt.req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		nc.Close()
		if resp.StatusCode != tt.status || resp.Header.Get("X-Request-ID") == "" {
			t.Errorf("%d, X-Request-ID %q; want %d and an id", resp.StatusCode, resp.Header.Get("X-Request-ID"), tt.status)
		}
	}
	// HTTP/2: a malformed request (a connection-specific field, RFC 9113 §8.2.2)
	// is answered 400 before any handler runs.
	got, err := h2raw.Get(addr, "/bench", hpack.HeaderField{Name: "connection", Value: "close"})
	if err != nil {
		t.Fatal(err)
	}
	if got[":status"] != "400" || got["x-request-id"] == "" {
		t.Fatalf("h2: %v", got)
	}
}

// TestDemoSSETiming: 5 events 100 ms apart, each arriving as it is sent.
func TestDemoSSETiming(t *testing.T) {
	t.Parallel()
	base := startDemo(t, false)
	resp, err := http.Get(base + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	start := time.Now()
	var arrivals []time.Duration
	for len(arrivals) < 5 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d events: %v", len(arrivals), err)
		}
		if strings.HasPrefix(line, "data: ") {
			arrivals = append(arrivals, time.Since(start))
		}
	}
	// Sent over 400 ms, a stream held back until its end would arrive in one
	// read; one interval of spread shows it was not, while a client that a
	// loaded machine stalls for a few hundred ms still passes.
	if arrivals[4]-arrivals[0] < 100*time.Millisecond {
		t.Fatalf("events arrived together, not as sent: %v", arrivals)
	}
}

// TestBareMode checks the benchmark mode: the hot routes answer as in the
// contract, without the demo's middleware and without /metrics.
func TestBareMode(t *testing.T) {
	t.Parallel()
	for _, inline := range []bool{false, true} {
		base := startDemoMode(t, inline, true)
		for name, client := range clients() {
			for path, want := range map[string]string{
				"/bench":            "OK",
				"/json":             `{"message":"Hello, World!"}`,
				"/users/7/posts/9":  "user=7 post=9",
				"/nethttp/hello":    "hello from net/http",
				"/download?size=10": "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
			} {
				req, _ := http.NewRequest("GET", base+path, nil)
				req.Header.Set("Accept-Encoding", "gzip")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("%s %s: %v", name, path, err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(b) != want || resp.Header.Get("X-Request-ID") != "" ||
					resp.Header.Get("Content-Encoding") != "" {
					t.Fatalf("%s inline=%v %s: %d %q %v", name, inline, path, resp.StatusCode, b, resp.Header)
				}
			}
			resp, err := client.Get(base + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 404 {
				t.Fatalf("/metrics in bare mode: %d", resp.StatusCode)
			}
		}
	}
}
