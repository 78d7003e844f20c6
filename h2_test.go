package celeris

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/internal/h2raw"
)

// TestRoutesBothProtocols runs the route table over HTTP/1.1 and h2c.
func TestRoutesBothProtocols(t *testing.T) {
	_, addr := startServer(t, Config{MaxRequestBodySize: 64 << 20}, testRoutes)
	forEachProto(t, func(t *testing.T, client *http.Client, proto string) {
		tests := []struct {
			method, path string
			status       int
			body         string
			header       map[string]string
		}{
			{method: "GET", path: "/bench", status: 200, body: "OK"},
			{method: "GET", path: "/inline", status: 200, body: "inline"},
			{method: "GET", path: "/users/42/posts/7", status: 200, body: "user=42 post=7"},
			{method: "GET", path: "/json", status: 200, body: `{"message":"Hello, World!"}`, header: map[string]string{"Content-Type": "application/json"}},
			{method: "GET", path: "/nope", status: 404},
			{method: "DELETE", path: "/users/1/posts/2", status: 405, header: map[string]string{"Allow": "GET, HEAD, PUT"}},
			{method: "HEAD", path: "/bench", status: 200},
			{method: "GET", path: "/panic", status: 500},
			{method: "POST", path: "/reject", status: 403, body: "no"},
			{method: "GET", path: "/query?a=x%20y&b=2", status: 200, body: "x y|2"},
			{method: "GET", path: "/stream", status: 200, body: "chunk0;chunk1;chunk2;"},
		}
		for _, tt := range tests {
			req, _ := http.NewRequest(tt.method, "http://"+addr+tt.path, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", tt.method, tt.path, err)
			}
			wantProto(t, resp, proto)
			body := bodyString(t, resp)
			if resp.StatusCode != tt.status || (tt.body != "" && body != tt.body) {
				t.Errorf("%s %s: %d %q, want %d %q", tt.method, tt.path, resp.StatusCode, body, tt.status, tt.body)
			}
			for k, v := range tt.header {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s %s: %s = %q, want %q", tt.method, tt.path, k, got, v)
				}
			}
		}
		// Bodies both ways, large.
		up := bytes.Repeat([]byte("celeris!"), 2<<20) // 16 MiB
		resp, err := client.Post("http://"+addr+"/upload", "application/octet-stream", bytes.NewReader(up))
		if err != nil {
			t.Fatal(err)
		}
		if got := bodyString(t, resp); got != strconv.Itoa(len(up)) {
			t.Fatalf("16 MiB upload: %d %q", resp.StatusCode, got)
		}
		resp, err = client.Get("http://" + addr + "/download?size=67108864")
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != 64<<20 {
			t.Fatalf("64 MiB download: %d bytes, %v", n, err)
		}
	})
}

func bigRoutes(s *Server) {
	s.GET("/download", func(c *Context) error {
		n, _ := strconv.Atoi(c.Query("size"))
		return c.Blob(200, "application/octet-stream", make([]byte, n))
	})
}

func init() { extraRoutes = append(extraRoutes, bigRoutes) }

// TestH2OneConnectionManyGoroutines: 100 goroutines x 10 requests share one
// connection (one HPACK decoder and encoder), the seeds' regression test.
func TestH2OneConnectionManyGoroutines(t *testing.T) {
	_, addr := startServer(t, Config{}, testRoutes)
	client := xnetH2cClient()
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := 0; g < 100; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				path := fmt.Sprintf("/users/%d/posts/%d", g, i)
				want := fmt.Sprintf("user=%d post=%d", g, i)
				if i%2 == 0 {
					path, want = "/query?a="+strconv.Itoa(g*i)+"&b=x", strconv.Itoa(g*i)+"|x"
				}
				resp, err := client.Get("http://" + addr + path)
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(b) != want {
					errs <- fmt.Errorf("%s: %d %q", path, resp.StatusCode, b)
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestH2ManyStreamsManyConnections: 600 concurrent streams over 100 connections,
// zero protocol errors.
func TestH2ManyStreamsManyConnections(t *testing.T) {
	// Each handler waits until all 600 run: the streams are concurrent.
	var running atomic.Int32
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	_, addr := startServer(t, Config{}, func(s *Server) {
		testRoutes(s)
		s.GET("/hold", func(c *Context) error {
			if running.Add(1) == 600 {
				free()
			}
			<-release
			return c.String(200, "OK")
		})
	})
	t.Cleanup(free) // before the server's shutdown, which waits for the handlers
	var wg sync.WaitGroup
	errs := make(chan error, 600)
	for c := 0; c < 100; c++ {
		client := xnetH2cClient()
		for s := 0; s < 6; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get("http://" + addr + "/hold")
				if err != nil {
					errs <- err
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 || string(b) != "OK" {
					errs <- fmt.Errorf("%d %q", resp.StatusCode, b)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		n++
		if n < 5 {
			t.Error(err)
		}
	}
	if n > 0 {
		t.Fatalf("%d of 600 streams failed", n)
	}
}

// TestH2RefusalHeader: HTTP/2's own refusals (413 for a declared body over the
// limit, 431 for a header list over it) carry Config.RefusalHeader's fields, and
// a panicking RefusalHeader leaves them out without harming the server.
func TestH2RefusalHeader(t *testing.T) {
	var panics atomic.Bool
	refusal := func(status int) http.Header {
		if panics.Load() {
			panic("refusal header")
		}
		return refusedHeader(status)
	}
	_, addr := startServer(t, Config{MaxRequestBodySize: 1 << 10, MaxHeaderBytes: 4 << 10, RefusalHeader: refusal}, testRoutes)
	client := h2cClient()
	for _, withPanic := range []bool{false, true} {
		panics.Store(withPanic)
		want := func(status int) string {
			if withPanic {
				return ""
			}
			return strconv.Itoa(status)
		}
		big, _ := http.NewRequest("POST", "http://"+addr+"/upload", bytes.NewReader(make([]byte, 4<<10)))
		resp, err := client.Do(big)
		if err != nil {
			t.Fatal(err)
		}
		_ = bodyString(t, resp)
		if resp.ProtoMajor != 2 || resp.StatusCode != 413 || resp.Header.Get("X-Refused") != want(413) {
			t.Fatalf("%s %d, X-Refused %q", resp.Proto, resp.StatusCode, resp.Header.Get("X-Refused"))
		}
		// Go's client does not send a header list over the advertised limit. (One
		// string over it is a COMPRESSION_ERROR, as in x/net's server: the
		// decoder refuses to read it.)
		var many []hpack.HeaderField
		for i := range 40 {
			many = append(many, hpack.HeaderField{Name: "x-f" + strconv.Itoa(i), Value: strings.Repeat("h", 200)})
		}
		status, fields := rawH2Get(t, addr, many...)
		if status != "431" || fields["x-refused"] != want(431) {
			t.Fatalf("%s %v", status, fields)
		}
		// A malformed request (a connection-specific field) gets 400 before any
		// handler runs.
		status, fields = rawH2Get(t, addr, hpack.HeaderField{Name: "connection", Value: "close"})
		if status != "400" || fields["x-refused"] != want(400) {
			t.Fatalf("%s %v", status, fields)
		}
		_, te := fields["te"]
		_, cl := fields["content-length"] // the 400 has no content-length of its own
		if te || cl || fields["content-type"] == "text/html" {
			t.Fatalf("fields the server owns passed: %v", fields)
		}
	}
	if resp, err := client.Get("http://" + addr + "/bench"); err != nil || bodyString(t, resp) != "OK" || resp.Header.Get("X-Refused") != "" {
		t.Fatal(resp, err)
	}
}

// rawH2Get sends GET /bench with extra fields over a prior-knowledge h2c
// connection of its own and returns the response's status and fields.
func rawH2Get(t *testing.T, addr string, extra ...hpack.HeaderField) (string, map[string]string) {
	t.Helper()
	fields, err := h2raw.Get(addr, "/bench", extra...)
	if err != nil {
		t.Fatal(err)
	}
	return fields[":status"], fields
}

// TestH2CUpgrade: an HTTP/1.1 request with Upgrade: h2c gets 101, then its
// response on stream 1 over HTTP/2 (RFC 7540 §3.2), as curl --http2 does.
func TestH2CUpgrade(t *testing.T) {
	_, addr := startServer(t, Config{}, testRoutes)
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	out, err := exec.Command(curl, "-s", "-i", "--http2", "http://"+addr+"/users/3/posts/4").CombinedOutput()
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, out)
	}
	s := string(out)
	if !strings.Contains(s, "101 Switching Protocols") || !strings.Contains(s, "HTTP/2 200") || !strings.HasSuffix(s, "user=3 post=4") {
		t.Fatalf("curl --http2 output:\n%s", s)
	}
	out, err = exec.Command(curl, "-s", "--http2-prior-knowledge", "-d", "hello", "http://"+addr+"/upload").CombinedOutput()
	if err != nil || string(out) != "5" {
		t.Fatalf("curl --http2-prior-knowledge upload: %q %v", out, err)
	}
}

// TestH2CDisabled: with DisableH2C the preface gets an error and close.
func TestH2CDisabled(t *testing.T) {
	_, addr := startServer(t, Config{DisableH2C: true, RefusalHeader: refusedHeader}, testRoutes)
	rc := dialRaw(t, addr)
	rc.send("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
	if resp := rc.readResponse("PRI"); resp.StatusCode != 505 || resp.Header.Get("X-Refused") != "505" ||
		resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("status %d, header %v", resp.StatusCode, resp.Header)
	}
	rc.expectClosed()
	// Upgrade is ignored: the request is served over HTTP/1.1.
	rc = dialRaw(t, addr)
	rc.send("GET /bench HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n")
	if resp := rc.readResponse("GET"); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}
