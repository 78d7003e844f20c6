package demo

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Real clients on every route of the demo contract over TLS: curl
// (--http2 and --http1.1), h2load, and Python's httpx with http2=True. Go's
// net/http client (h2 and HTTP/1.1) runs checkContract over TLS in TestDemoTLS;
// TestDemoTLSPage adds GET / for it. /ws/echo over TLS is covered by
// TestDemoBrowserPage and the websocket package's tests. Each test is skipped when
// its tool is not installed here; .ci/run installs curl, nghttp2-client (h2load)
// and httpx[http2].

// tlsRoute is one request of the contract and what its answer must be.
type tlsRoute struct {
	method, path string
	body         []byte // request body (POST)
	gzip         bool   // send Accept-Encoding: gzip; the answer must be gzip
	status       int
	want         string // exact body ("" : not checked)
	length       int    // body length (-1: not checked)
	ctype        string // Content-Type prefix ("": not checked)
	contains     string // the body contains this ("": not checked)
	events       int    // SSE: this many "data: " lines
}

// tlsRoutes is every HTTP route of DEMO.md's table (GET /ws/echo aside).
func tlsRoutes() []tlsRoute {
	const hello = `{"message":"Hello, World!"}`
	return []tlsRoute{
		{method: "GET", path: "/bench", status: 200, want: "OK", length: -1, ctype: "text/plain"},
		{method: "GET", path: "/json", status: 200, want: hello, length: -1, ctype: "application/json"},
		{method: "GET", path: "/json", gzip: true, status: 200, want: hello, length: -1, ctype: "application/json"},
		{method: "GET", path: "/users/1/posts/2", status: 200, want: "user=1 post=2", length: -1, ctype: "text/plain"},
		{method: "POST", path: "/upload", body: bytes.Repeat([]byte("u"), 1<<20), status: 200, want: "1048576", length: -1},
		{method: "GET", path: "/download?size=1000000", status: 200, length: 1000000, ctype: "application/octet-stream"},
		{method: "GET", path: "/download?size=x", status: 400, length: -1},
		{method: "GET", path: "/slow?ms=50", status: 200, want: "OK", length: -1},
		{method: "GET", path: "/panic", status: 500, length: -1},
		{method: "GET", path: "/nethttp/hello", status: 200, want: "hello from net/http", length: -1},
		{method: "GET", path: "/sse", status: 200, length: -1, ctype: "text/event-stream", events: 5},
		{method: "GET", path: "/stream?n=7", status: 200, length: 7 << 10},
		{method: "GET", path: "/metrics", status: 200, length: -1, contains: "celeris_http_requests_total"},
		{method: "GET", path: "/", status: 200, length: -1, ctype: "text/html", contains: "/ws/echo"},
	}
}

// check reports what is wrong with an answer to r ("" when nothing). body is the
// body as it came (gzip-compressed when r.gzip).
func (r tlsRoute) check(status int, hdr http.Header, body []byte) string {
	if status != r.status {
		return fmt.Sprintf("status %d, want %d (body %.200q)", status, r.status, body)
	}
	if hdr.Get("X-Request-Id") == "" {
		return "no X-Request-ID"
	}
	if r.gzip {
		if ce := hdr.Get("Content-Encoding"); ce != "gzip" {
			return fmt.Sprintf("Content-Encoding %q, want gzip", ce)
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return "gzip: " + err.Error()
		}
		if body, err = io.ReadAll(zr); err != nil {
			return "gunzip: " + err.Error()
		}
	}
	switch {
	case r.want != "" && string(body) != r.want:
		return fmt.Sprintf("body %.200q, want %q", body, r.want)
	case r.length >= 0 && len(body) != r.length:
		return fmt.Sprintf("%d bytes, want %d", len(body), r.length)
	case r.ctype != "" && !strings.HasPrefix(hdr.Get("Content-Type"), r.ctype):
		return fmt.Sprintf("Content-Type %q, want %s", hdr.Get("Content-Type"), r.ctype)
	case r.contains != "" && !bytes.Contains(body, []byte(r.contains)):
		return fmt.Sprintf("body lacks %q", r.contains)
	case r.events > 0 && bytes.Count(body, []byte("data: ")) != r.events:
		return fmt.Sprintf("%d events, want %d: %q", bytes.Count(body, []byte("data: ")), r.events, body)
	}
	return ""
}

// TestDemoTLSCurl: curl -k over TLS, --http2 and --http1.1, on every route; the
// answer must come over the protocol asked for.
func TestDemoTLSCurl(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	if out, _ := exec.Command("curl", "--version").Output(); !bytes.Contains(out, []byte("HTTP2")) {
		t.Skip("curl without HTTP/2")
	}
	_, secure := startDemoTLS(t, options{})
	dir := t.TempDir()
	upload := filepath.Join(dir, "upload")
	for _, proto := range []struct{ flag, version string }{{"--http2", "2"}, {"--http1.1", "1.1"}} {
		t.Run(proto.flag, func(t *testing.T) {
			for i, r := range tlsRoutes() {
				hdrFile, bodyFile := filepath.Join(dir, "h"+strconv.Itoa(i)), filepath.Join(dir, "b"+strconv.Itoa(i))
				args := []string{"-sSk", proto.flag, "--max-time", "20", "-X", r.method, "-D", hdrFile, "-o", bodyFile,
					"-w", "%{http_code} %{http_version}"}
				if r.gzip {
					args = append(args, "-H", "Accept-Encoding: gzip") // no --compressed: the raw gzip body
				}
				if r.body != nil {
					if err := os.WriteFile(upload, r.body, 0o600); err != nil {
						t.Fatal(err)
					}
					args = append(args, "-H", "Content-Type: application/octet-stream", "--data-binary", "@"+upload)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				out, err := exec.CommandContext(ctx, "curl", append(args, secure+r.path)...).Output()
				cancel()
				if err != nil {
					t.Fatalf("curl %s %s: %v %s", r.method, r.path, err, out)
				}
				var status int
				var version string
				if _, err := fmt.Sscan(string(out), &status, &version); err != nil {
					t.Fatalf("curl -w said %q", out)
				}
				if version != proto.version {
					t.Errorf("%s %s: served over HTTP/%s", r.method, r.path, version)
				}
				hdr, body := readCurlHeaders(t, hdrFile), mustRead(t, bodyFile)
				if msg := r.check(status, hdr, body); msg != "" {
					t.Errorf("%s %s (gzip %v): %s", r.method, r.path, r.gzip, msg)
				}
			}
		})
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readCurlHeaders parses the header block curl -D wrote (the last one, past any
// 1xx).
func readCurlHeaders(t *testing.T, name string) http.Header {
	t.Helper()
	h := http.Header{}
	for _, line := range strings.Split(string(mustRead(t, name)), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(line, "HTTP/") {
			h = http.Header{}
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return h
}

// TestDemoTLSH2load: h2load over TLS (h2 by ALPN, and --h1) on the three
// benchmark routes: 200 requests on 4 connections, 10 streams (or pipelined
// requests) each; every one succeeds with a 2xx.
func TestDemoTLSH2load(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("h2load"); err != nil {
		t.Skip("h2load not installed (apt-get install nghttp2-client)")
	}
	_, secure := startDemoTLS(t, options{})
	done := regexp.MustCompile(`requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout`)
	codes := regexp.MustCompile(`status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx`)
	for _, h1 := range []bool{false, true} {
		for _, path := range []string{"/bench", "/json", "/users/1/posts/2"} {
			args := []string{"-n", "200", "-c", "4", "-m", "10", secure + path}
			proto := "h2"
			if h1 {
				args, proto = append([]string{"--h1"}, args...), "http/1.1"
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			out, err := exec.CommandContext(ctx, "h2load", args...).CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("h2load %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			d, c := done.FindStringSubmatch(string(out)), codes.FindStringSubmatch(string(out))
			if d == nil || c == nil {
				t.Fatalf("h2load %s said:\n%s", strings.Join(args, " "), out)
			}
			if d[1] != "200" || d[3] != "200" || d[4] != "200" || d[5] != "0" || d[6] != "0" || d[7] != "0" ||
				c[1] != "200" || c[2] != "0" || c[3] != "0" || c[4] != "0" ||
				!strings.Contains(string(out), "Application protocol: "+proto) {
				t.Errorf("h2load %s:\n%s", strings.Join(args, " "), out)
				continue
			}
			t.Logf("h2load %s %s: %s; %s; %s", proto, path, d[0], c[0], regexp.MustCompile(`finished in [^\n]*`).FindString(string(out)))
		}
	}
}

// TestDemoTLSPythonHTTPX: Python's httpx with http2=True fetches every route over
// TLS (testdata/tls_client_httpx.py); each answer must be HTTP/2.
func TestDemoTLSPythonHTTPX(t *testing.T) {
	t.Parallel()
	if exec.Command("python3", "-c", "import httpx, h2").Run() != nil {
		t.Skip("python3 with httpx[http2] not installed (pip install 'httpx[http2]')")
	}
	_, secure := startDemoTLS(t, options{})
	out := runClient(t, nil, "python3", filepath.Join("testdata", "tls_client_httpx.py"), secure)
	if !strings.Contains(out, "python httpx: ok") {
		t.Fatalf("client said: %s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// TestDemoTLSPage: Go's net/http client over TLS (h2 and HTTP/1.1) on the routes
// checkContract leaves out: GET / and the table's checks as the other clients
// run them.
func TestDemoTLSPage(t *testing.T) {
	t.Parallel()
	_, secure := startDemoTLS(t, options{})
	for name, client := range tlsClients(t, nil) {
		for _, r := range tlsRoutes() {
			req, _ := http.NewRequest(r.method, secure+r.path, bytes.NewReader(r.body))
			if r.body == nil {
				req.Body = nil
			}
			if r.gzip {
				req.Header.Set("Accept-Encoding", "gzip")
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %s %s: %v", name, r.method, r.path, err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s %s %s: %v", name, r.method, r.path, err)
			}
			if want := map[string]int{"tls-h2": 2, "tls-h1": 1}[name]; resp.ProtoMajor != want {
				t.Errorf("%s %s: served over %s", name, r.path, resp.Proto)
			}
			if msg := r.check(resp.StatusCode, resp.Header, body); msg != "" {
				t.Errorf("%s %s %s: %s", name, r.method, r.path, msg)
			}
		}
	}
}
