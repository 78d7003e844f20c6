package celeris

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// extraRoutes are added to testRoutes by other test files.
var extraRoutes []func(s *Server)

func testRoutes(s *Server) {
	for _, f := range extraRoutes {
		f(s)
	}
	s.GET("/bench", func(c *Context) error { return c.String(200, "OK") })
	s.GET("/inline", func(c *Context) error { return c.String(200, "inline") }).Inline()
	s.GET("/users/:id/posts/:postId", func(c *Context) error {
		return c.String(200, "user="+c.Param("id")+" post="+c.Param("postId"))
	})
	s.GET("/json", func(c *Context) error { return c.JSON(200, map[string]string{"message": "Hello, World!"}) })
	s.POST("/upload", func(c *Context) error {
		b, err := c.Body()
		if err != nil {
			return err
		}
		return c.String(200, strconv.Itoa(len(b)))
	})
	s.POST("/inline-upload", func(c *Context) error { return c.String(200, strconv.Itoa(len(c.req.Body))) }).Inline()
	s.POST("/reject", func(c *Context) error { return NewHTTPError(403, "no") })
	s.GET("/panic", func(c *Context) error { panic("boom") })
	// /held is a request in flight until the server begins to shut down.
	s.GET("/held", func(c *Context) error {
		<-s.ShuttingDown()
		return c.String(200, "OK")
	})
	s.GET("/query", func(c *Context) error { return c.String(200, c.Query("a")+"|"+c.Query("b")) })
	s.GET("/stream", func(c *Context) error {
		w, err := c.Stream(200, "text/plain")
		if err != nil {
			return err
		}
		for i := 0; i < 3; i++ {
			fmt.Fprintf(w, "chunk%d;", i)
			_ = w.Flush()
		}
		return nil
	})
	s.PUT("/users/:id/posts/:postId", func(c *Context) error { return c.NoContent(204) })
}

func TestH1Routes(t *testing.T) {
	_, addr := startServer(t, Config{}, testRoutes)
	client := &http.Client{Timeout: 10 * time.Second}
	tests := []struct {
		method, path string
		status       int
		body         string
		header       map[string]string
	}{
		{method: "GET", path: "/bench", status: 200, body: "OK", header: map[string]string{"Content-Type": "text/plain; charset=utf-8"}},
		{method: "GET", path: "/inline", status: 200, body: "inline"},
		{method: "GET", path: "/users/42/posts/7", status: 200, body: "user=42 post=7"},
		{method: "GET", path: "/json", status: 200, body: `{"message":"Hello, World!"}`, header: map[string]string{"Content-Type": "application/json"}},
		{method: "GET", path: "/nope", status: 404, body: "Not Found"},
		{method: "DELETE", path: "/users/1/posts/2", status: 405, header: map[string]string{"Allow": "GET, HEAD, PUT"}},
		{method: "HEAD", path: "/bench", status: 200, body: ""},
		{method: "GET", path: "/panic", status: 500},
		{method: "POST", path: "/reject", status: 403, body: "no"},
		{method: "GET", path: "/query?a=x%20y&b=2", status: 200, body: "x y|2"},
		{method: "GET", path: "/stream", status: 200, body: "chunk0;chunk1;chunk2;"},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, "http://"+addr+tt.path, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := bodyString(t, resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tt.status, body)
			}
			if tt.body != "" && body != tt.body {
				t.Fatalf("body %q, want %q", body, tt.body)
			}
			for k, v := range tt.header {
				if got := resp.Header.Get(k); got != v {
					t.Fatalf("%s = %q, want %q", k, got, v)
				}
			}
			if resp.Header.Get("Date") == "" {
				t.Fatal("no Date header")
			}
		})
	}
	// The server keeps serving after the panic.
	resp, err := client.Get("http://" + addr + "/bench")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("after panic: %v %v", resp, err)
	}
	resp.Body.Close()
}

func TestH1KeepAliveReuse(t *testing.T) {
	_, addr := startServer(t, Config{}, testRoutes)
	rc := dialRaw(t, addr)
	for i := 0; i < 100; i++ {
		path := "/bench"
		if i%2 == 1 {
			path = "/inline"
		}
		rc.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n")
		resp := rc.readResponse("GET")
		if resp.StatusCode != 200 || resp.Close {
			t.Fatalf("request %d: status %d close %v", i, resp.StatusCode, resp.Close)
		}
	}
}

func TestH1Pipelining(t *testing.T) {
	_, addr := startServer(t, Config{}, testRoutes)
	rc := dialRaw(t, addr)
	var b strings.Builder
	want := []string{}
	for i := 0; i < 20; i++ {
		switch i % 4 {
		case 0:
			b.WriteString("GET /bench HTTP/1.1\r\nHost: x\r\n\r\n")
			want = append(want, "OK")
		case 1:
			fmt.Fprintf(&b, "GET /users/%d/posts/%d HTTP/1.1\r\nHost: x\r\n\r\n", i, i+1)
			want = append(want, fmt.Sprintf("user=%d post=%d", i, i+1))
		case 2:
			b.WriteString("GET /inline HTTP/1.1\r\nHost: x\r\n\r\n")
			want = append(want, "inline")
		case 3:
			b.WriteString("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
			want = append(want, "5")
		}
	}
	rc.send(b.String())
	for i, w := range want {
		resp := rc.readResponse("GET")
		if got := bodyString(t, resp); got != w {
			t.Fatalf("response %d: %q, want %q", i, got, w)
		}
	}
}

func TestH1OneByteWrites(t *testing.T) {
	_, addr := startServer(t, Config{}, testRoutes)
	rc := dialRaw(t, addr)
	req := "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n2\r\nde\r\n0\r\nX-Trailer: t\r\n\r\n" +
		"GET /users/5/posts/6 HTTP/1.1\r\nHost: x\r\n\r\n"
	rc.trickle(req)
	if got := bodyString(t, rc.readResponse("POST")); got != "5" {
		t.Fatalf("chunked upload: %q", got)
	}
	if got := bodyString(t, rc.readResponse("GET")); got != "user=5 post=6" {
		t.Fatalf("second request: %q", got)
	}
}

// refusedHeader is a Config.RefusalHeader for tests: X-Refused carries the status;
// the other fields must be dropped (owned by the server, or invalid: HTTP/2 would
// refuse the whole response over an empty name or a TE field).
func refusedHeader(status int) http.Header {
	return http.Header{"X-Refused": {strconv.Itoa(status)}, "Content-Length": {"1"},
		"Content-Type": {"text/html"}, "": {"empty name"}, "Te": {"gzip"}, "Connection": {"keep-alive"}}
}

// TestH1Framing checks every framing and limit rule: the status, the
// RefusalHeader fields, then close.
func TestH1Framing(t *testing.T) {
	_, addr := startServer(t, Config{MaxRequestBodySize: 1 << 20, RefusalHeader: refusedHeader}, testRoutes)
	long := strings.Repeat("a", 9<<10)
	tests := []struct {
		name, req string
		status    int
		routed    bool // answered by the handler chain (a streamed body's error), not refused
	}{
		{name: "no host", req: "GET /bench HTTP/1.1\r\n\r\n", status: 400},
		{name: "two hosts", req: "GET /bench HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400},
		{name: "cl and te", req: "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400},
		{name: "differing cl", req: "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", status: 400},
		{name: "te on 1.0", req: "POST /upload HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400},
		{name: "gzip te", req: "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", status: 501},
		{name: "chunked not last", req: "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n", status: 400},
		{name: "bare cr", req: "GET /bench HTTP/1.1\r\nHost: x\rX: y\r\n\r\n", status: 400},
		{name: "obs-fold", req: "GET /bench HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n", status: 400},
		{name: "space before colon", req: "GET /bench HTTP/1.1\r\nHost : x\r\n\r\n", status: 400},
		{name: "bad token", req: "GET /bench HTTP/1.1\r\nHost: x\r\nBa(d: y\r\n\r\n", status: 400},
		{name: "nul", req: "GET /bench HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n", status: 400},
		{name: "chunk overflow", req: "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", status: 400, routed: true},
		{name: "chunk overflow, buffered", req: "POST /inline-upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n", status: 400},
		{name: "uri too long", req: "GET /" + long + " HTTP/1.1\r\nHost: x\r\n\r\n", status: 414},
		{name: "header too large", req: "GET /bench HTTP/1.1\r\nHost: x\r\nX: " + strings.Repeat("b", 70<<10) + "\r\n\r\n", status: 431},
		{name: "body too large", req: "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n", status: 413},
		{name: "version", req: "GET /bench HTTP/1.2\r\nHost: x\r\n\r\n", status: 505},
		{name: "expectation", req: "GET /bench HTTP/1.1\r\nHost: x\r\nExpect: magic\r\n\r\n", status: 417},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := dialRaw(t, addr)
			rc.send(tt.req)
			resp := rc.readResponse("GET")
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			want := strconv.Itoa(tt.status)
			if tt.routed {
				want = ""
			}
			if !tt.routed && resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
				t.Fatalf("Content-Type %q", resp.Header.Values("Content-Type"))
			}
			if got := resp.Header.Get("X-Refused"); got != want || resp.ContentLength != int64(len(bodyString(t, resp))) {
				t.Fatalf("X-Refused %q, Content-Length %d", got, resp.ContentLength)
			}
			rc.expectClosed()
		})
	}
	t.Run("unknown method is routed", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("BREW /bench HTTP/1.1\r\nHost: x\r\n\r\n")
		resp := rc.readResponse("BREW")
		if resp.StatusCode != 405 || resp.Header.Get("X-Refused") != "" {
			t.Fatalf("status %d, want 405 (X-Refused %q)", resp.StatusCode, resp.Header.Get("X-Refused"))
		}
	})
}

func TestH1ConnectionRules(t *testing.T) {
	_, addr := startServer(t, Config{}, testRoutes)
	t.Run("1.0 closes by default", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("GET /bench HTTP/1.0\r\n\r\n")
		if resp := rc.readResponse("GET"); resp.StatusCode != 200 {
			t.Fatal(resp.Status)
		}
		rc.expectClosed()
	})
	t.Run("1.0 keep-alive", func(t *testing.T) {
		rc := dialRaw(t, addr)
		for i := 0; i < 3; i++ {
			rc.send("GET /bench HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
			resp := rc.readResponse("GET")
			if resp.StatusCode != 200 || resp.Header.Get("Connection") != "keep-alive" {
				t.Fatal(resp.Status, resp.Header)
			}
		}
	})
	t.Run("connection close honoured", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("GET /bench HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /bench HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp := rc.readResponse("GET"); !resp.Close {
			t.Fatal("response lacks Connection: close")
		}
		rc.expectClosed()
	})
	t.Run("100-continue", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
		line, err := rc.br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
			t.Fatalf("interim: %q %v", line, err)
		}
		if l, _ := rc.br.ReadString('\n'); l != "\r\n" {
			t.Fatalf("interim end: %q", l)
		}
		rc.send("abcd")
		if got := bodyString(t, rc.readResponse("POST")); got != "4" {
			t.Fatalf("body %q", got)
		}
	})
	t.Run("204 and 304 have no body", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("PUT /users/1/posts/2 HTTP/1.1\r\nHost: x\r\n\r\nGET /bench HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp := rc.readResponse("PUT"); resp.StatusCode != 204 || resp.Header.Get("Content-Length") != "" {
			t.Fatal(resp.Status, resp.Header)
		}
		if got := bodyString(t, rc.readResponse("GET")); got != "OK" {
			t.Fatalf("after 204: %q", got)
		}
	})
	t.Run("HEAD of a streamed response has no body", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\nGET /bench HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp := rc.readResponse("HEAD"); resp.StatusCode != 200 || resp.Header.Get("Content-Length") != "" {
			t.Fatal(resp.Status, resp.Header)
		}
		if got := bodyString(t, rc.readResponse("GET")); got != "OK" {
			t.Fatalf("after HEAD: %q", got)
		}
	})
	t.Run("HTTP/1.0 HEAD of a streamed response has no body", func(t *testing.T) {
		// The GET would be close-delimited; the HEAD answer ends at its blank line,
		// so a keep-alive client goes on with the next request.
		rc := dialRaw(t, addr)
		rc.send("HEAD /stream HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /bench HTTP/1.0\r\n\r\n")
		resp := rc.readResponse("HEAD")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Length") != "" || resp.Header.Get("Connection") != "keep-alive" {
			t.Fatal(resp.Status, resp.Header)
		}
		line, err := rc.br.ReadString('\n')
		if err != nil || line != "HTTP/1.1 200 OK\r\n" {
			t.Fatalf("after HEAD: %q, %v (a body was sent?)", line, err)
		}
	})
	t.Run("streamed response is chunked", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
		resp := rc.readResponse("GET")
		if len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
			t.Fatalf("transfer-encoding %v", resp.TransferEncoding)
		}
	})
}

func TestH1ReadHeaderTimeout(t *testing.T) {
	_, addr := startServer(t, Config{ReadHeaderTimeout: 500 * time.Millisecond, IdleTimeout: 700 * time.Millisecond}, testRoutes)
	t.Run("slowloris", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("GET /bench HTTP/1.1\r\nHost: x\r\n")
		rc.expectClosed()
	})
	t.Run("idle", func(t *testing.T) {
		rc := dialRaw(t, addr)
		rc.send("GET /bench HTTP/1.1\r\nHost: x\r\n\r\n")
		rc.readResponse("GET")
		rc.expectClosed()
	})
}

// TestH1BlockingHandlersIsolation: with 256 connections inside a 3 s handler, a
// new connection's request is answered at once and every slow request completes.
func TestH1BlockingHandlersIsolation(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	const slow = 256
	release := make(chan struct{}) // the blocked handlers answer once the latency is measured
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free()
	s, addr := startServer(t, Config{EventLoops: 1}, func(s *Server) {
		testRoutes(s)
		s.GET("/hold", func(c *Context) error {
			<-release
			return c.String(200, "OK")
		})
	})
	var wg sync.WaitGroup
	errs := make(chan error, slow)
	for i := 0; i < slow; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rc := dialRaw(t, addr)
			rc.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
			resp, err := http.ReadResponse(rc.br, nil)
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(b) != "OK" {
				errs <- fmt.Errorf("slow: %d %q", resp.StatusCode, b)
			}
		}()
	}
	waitFor(t, "the slow requests to reach their handlers", func() bool { return s.Stats().ActiveRequests == slow })
	rc := dialRaw(t, addr)
	lat := make([]time.Duration, 0, 100)
	for i := 0; i < 100; i++ {
		t0 := time.Now()
		rc.send("GET /bench HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp := rc.readResponse("GET"); resp.StatusCode != 200 {
			t.Fatal(resp.Status)
		}
		lat = append(lat, time.Since(t0))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	p99 := lat[98]
	t.Logf("p99 latency of /bench beside %d blocked handlers: %v", slow, p99)
	// A request that waited for the loop's blocked handlers would not be
	// answered before they are released; the bound tells a loaded machine from
	// a loop that answers late.
	if limit := time.Second; p99 > limit {
		t.Errorf("p99 %v > %v", p99, limit)
	}
	free()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
