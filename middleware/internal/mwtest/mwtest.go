// Package mwtest starts Celeris servers for the middleware tests: each server listens
// on 127.0.0.1:0 and stops when the test ends. Run repeats a test over HTTP/1.1 and
// h2c, with net/http clients.
package mwtest

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// Start starts a server with register's routes and returns it with its address.
func Start(t testing.TB, register func(s *celeris.Server)) (*celeris.Server, string) {
	t.Helper()
	return StartConfig(t, celeris.Config{}, register)
}

// StartConfig is Start with a server configuration (its Addr is replaced).
func StartConfig(t testing.TB, cfg celeris.Config, register func(s *celeris.Server)) (*celeris.Server, string) {
	t.Helper()
	return celeristest.Serve(t, cfg, register)
}

// Client returns an HTTP/1.1 client with a timeout and its own connection pool.
// It never follows redirects and never asks for compression by itself.
func Client(t testing.TB) *http.Client {
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second, CheckRedirect: noRedirect}
}

// H2CClient returns an HTTP/2 client with prior knowledge (h2c), otherwise as Client.
func H2CClient(t testing.TB) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{DisableCompression: true, Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second, CheckRedirect: noRedirect}
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// Run runs fn as subtest "h1" with an HTTP/1.1 client and as subtest "h2c" with an
// HTTP/2 prior-knowledge client, so that each behaviour is tested over both.
func Run(t *testing.T, addr string, fn func(t *testing.T, client *http.Client)) {
	t.Helper()
	t.Run("h1", func(t *testing.T) { fn(t, Client(t)) })
	t.Run("h2c", func(t *testing.T) { fn(t, H2CClient(t)) })
}

// Do sends a request and returns the response with its body read and closed.
// header may be nil; body may be nil.
func Do(t testing.TB, client *http.Client, method, url string, header http.Header, body io.Reader) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, url, err)
	}
	return resp, string(b)
}

// Get is Do for a GET without body.
func Get(t testing.TB, client *http.Client, url string, header http.Header) (*http.Response, string) {
	t.Helper()
	return Do(t, client, http.MethodGet, url, header, nil)
}

// H builds an http.Header from name, value pairs.
func H(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// AllocsPerRequest measures the allocations of the whole process per request while
// it sends n copies of the raw HTTP/1.1 request req over one connection, one at a
// time. The client side allocates nothing in steady state, so the figure is the
// server's: compare it with a route without the middleware under test. Responses
// must carry Content-Length (no chunked bodies).
func AllocsPerRequest(t testing.TB, addr, req string, n int) float64 {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(60 * time.Second))
	raw := []byte(req)
	buf := make([]byte, 64<<10)
	roundTrip := func() {
		if _, err := c.Write(raw); err != nil {
			t.Fatal(err)
		}
		readRawResponse(t, c, buf)
	}
	for range 100 { // warm up pools and buffers
		roundTrip()
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		roundTrip()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n)
}

var (
	crlf2 = []byte("\r\n\r\n")
	clKey = []byte("\r\nContent-Length: ")
)

// readRawResponse reads one response with a Content-Length body into buf.
func readRawResponse(t testing.TB, c net.Conn, buf []byte) {
	n := 0
	for {
		if end := bytes.Index(buf[:n], crlf2); end >= 0 {
			head := buf[:end+2]
			bodyLen := 0
			if i := bytes.Index(head, clKey); i >= 0 {
				rest := head[i+len(clKey):]
				for _, b := range rest[:bytes.IndexByte(rest, '\r')] {
					if b < '0' || b > '9' {
						t.Fatalf("bad Content-Length in %q", head)
					}
					bodyLen = bodyLen*10 + int(b-'0')
				}
			}
			total := end + 4 + bodyLen
			if total > len(buf) {
				t.Fatalf("response of %d bytes does not fit the buffer", total)
			}
			for n < total {
				m, err := c.Read(buf[n:])
				if err != nil {
					t.Fatal(err)
				}
				n += m
			}
			if n != total {
				t.Fatalf("unexpected bytes after the response: %q", buf[total:n])
			}
			return
		}
		if n == len(buf) {
			t.Fatal("response head too large")
		}
		m, err := c.Read(buf[n:])
		if err != nil {
			t.Fatal(err)
		}
		n += m
	}
}

// LogBuffer is a log sink (for slog handlers and log.Logger) that concurrent
// handlers may write while a test reads it: Write, String, Reset, Wait.
type LogBuffer = testkit.Log
