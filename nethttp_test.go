package celeris

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func netHTTPRoutes(s *Server) {
	s.Use(func(next HandlerFunc) HandlerFunc {
		return func(c *Context) error {
			c.SetHeader("X-Served-By", "celeris")
			return next(c)
		}
	})
	s.GET("/users/:id", func(c *Context) error {
		return c.String(200, "user "+c.Param("id")+" q="+c.Query("q")+" host="+c.Host()+" proto="+c.Proto())
	})
	s.GET("/inline", func(c *Context) error { return c.String(200, "inline") }).Inline()
	s.POST("/echo", func(c *Context) error {
		b, err := c.Body()
		if err != nil {
			return err
		}
		return c.Blob(200, c.Header("Content-Type"), b)
	})
	s.GET("/json", func(c *Context) error { return c.JSON(200, map[string]int{"n": 1}) })
	s.GET("/raw", func(c *Context) error { return c.Blob(200, "", []byte("<html>no sniffing")) })
	s.GET("/remote", func(c *Context) error { return c.String(200, c.RemoteAddr().String()) })
	s.GET("/fail", func(c *Context) error { return NewHTTPError(http.StatusTeapot, "short and stout") })
	s.GET("/stream", func(c *Context) error {
		w, err := c.Stream(200, "text/plain")
		if err != nil {
			return err
		}
		for i := range 3 {
			fmt.Fprintf(w, "chunk%d;", i)
			if err := w.Flush(); err != nil {
				return err
			}
		}
		return nil
	})
	s.POST("/trailer", func(c *Context) error {
		b, err := io.ReadAll(c.BodyReader())
		if err != nil {
			return err
		}
		var tr string
		c.VisitTrailers(func(name, value string) { tr += name + "=" + value })
		return c.String(200, string(b)+"|"+tr)
	})
	s.DELETE("/users/:id", func(c *Context) error { return c.NoContent(204) })
}

func TestServeHTTPRecorder(t *testing.T) {
	s := New(Config{})
	netHTTPRoutes(s)
	tests := []struct {
		method, target string
		body           string
		header         map[string]string
		status         int
		wantBody       string
		wantHeader     map[string]string
	}{
		{method: "GET", target: "/users/42?q=x", status: 200, wantBody: "user 42 q=x host=example.com proto=HTTP/1.1",
			wantHeader: map[string]string{"X-Served-By": "celeris", "Content-Length": "43", "Content-Type": "text/plain; charset=utf-8"}},
		{method: "GET", target: "/inline", status: 200, wantBody: "inline"},
		{method: "POST", target: "/echo", body: "ping", header: map[string]string{"Content-Type": "text/x-ping"},
			status: 200, wantBody: "ping", wantHeader: map[string]string{"Content-Type": "text/x-ping"}},
		{method: "GET", target: "/json", status: 200, wantBody: `{"n":1}`, wantHeader: map[string]string{"Content-Type": "application/json"}},
		{method: "GET", target: "/raw", status: 200, wantBody: "<html>no sniffing", wantHeader: map[string]string{"Content-Type": ""}},
		{method: "GET", target: "/remote", status: 200, wantBody: "192.0.2.1:1234"},
		{method: "GET", target: "/fail", status: 418, wantBody: "short and stout"},
		{method: "GET", target: "/nowhere", status: 404, wantBody: "Not Found", wantHeader: map[string]string{"X-Served-By": "celeris"}},
		{method: "PUT", target: "/users/1", status: 405, wantHeader: map[string]string{"Allow": "DELETE, GET, HEAD"}},
		{method: "HEAD", target: "/users/7", status: 200, wantBody: "", wantHeader: map[string]string{"Content-Length": "41"}},
		{method: "DELETE", target: "/users/7", status: 204, wantHeader: map[string]string{"Content-Length": ""}},
		{method: "GET", target: "/stream", status: 200, wantBody: "chunk0;chunk1;chunk2;", wantHeader: map[string]string{"Content-Length": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.target, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			req := httptest.NewRequest(tt.method, tt.target, body)
			for k, v := range tt.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d", rec.Code, tt.status)
			}
			if tt.wantBody != "" || tt.method == "HEAD" {
				if got := rec.Body.String(); got != tt.wantBody {
					t.Errorf("body %q, want %q", got, tt.wantBody)
				}
			}
			for k, v := range tt.wantHeader {
				if got := rec.Header().Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
		})
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/stream", nil))
	if !rec.Flushed {
		t.Error("streamed response was not flushed")
	}
}

func TestServeHTTPBodyLimit(t *testing.T) {
	s := New(Config{MaxRequestBodySize: 10})
	netHTTPRoutes(s)
	// Declared too large: refused before routing.
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("POST", "/echo", strings.NewReader(strings.Repeat("x", 11))))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("declared: status %d", rec.Code)
	}
	// Unknown length: the read fails at the limit.
	req := httptest.NewRequest("POST", "/echo", io.MultiReader(strings.NewReader(strings.Repeat("x", 11))))
	req.ContentLength = -1
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("streamed: status %d", rec.Code)
	}
	req = httptest.NewRequest("POST", "/echo", io.MultiReader(strings.NewReader("0123456789")))
	req.ContentLength = -1
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 200 || rec.Body.String() != "0123456789" {
		t.Errorf("at the limit: %d %q", rec.Code, rec.Body.String())
	}
}

func TestServeHTTPServer(t *testing.T) {
	s := New(Config{})
	netHTTPRoutes(s)
	release := make(chan struct{})
	s.GET("/flush", func(c *Context) error {
		w, err := c.Stream(200, "text/plain")
		if err != nil {
			return err
		}
		io.WriteString(w, "first\n")
		w.Flush()
		select {
		case <-release:
		case <-time.After(10 * time.Second):
			return nil
		}
		io.WriteString(w, "second\n")
		return nil
	})
	ts := httptest.NewServer(s)
	defer ts.Close()
	client := ts.Client()

	resp, err := client.Get(ts.URL + "/users/9?q=y")
	if err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(ts.URL, "http://")
	if body := bodyString(t, resp); body != "user 9 q=y host="+host+" proto=HTTP/1.1" {
		t.Errorf("got %q", body)
	}
	if resp.Header.Get("X-Served-By") != "celeris" || resp.ContentLength != int64(len("user 9 q=y host="+host+" proto=HTTP/1.1")) {
		t.Errorf("header %v", resp.Header)
	}

	resp, err = client.Get(ts.URL + "/remote")
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); !strings.HasPrefix(body, "127.0.0.1:") {
		t.Errorf("remote %q", body)
	}

	resp, err = client.Get(ts.URL + "/flush")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || line != "first\n" {
		t.Fatalf("first line %q %v", line, err)
	}
	close(release)
	if rest, err := io.ReadAll(br); err != nil || string(rest) != "second\n" {
		t.Fatalf("rest %q %v", rest, err)
	}
	resp.Body.Close()

	// A chunked request with a trailer.
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "POST /trailer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n"+
		"3\r\nabc\r\n0\r\nX-Sum: 42\r\n\r\n")
	resp, err = http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); body != "abc|X-Sum=42" {
		t.Errorf("trailer: %q", body)
	}
}

func TestServeHTTPH2C(t *testing.T) {
	s := New(Config{})
	netHTTPRoutes(s)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	hs := &http.Server{Handler: s, Protocols: &protos, ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()

	var cp http.Protocols
	cp.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &cp}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	base := "http://" + ln.Addr().String()

	resp, err := client.Get(base + "/users/5")
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); resp.ProtoMajor != 2 || !strings.HasSuffix(body, "proto=HTTP/2.0") {
		t.Errorf("%s %q", resp.Proto, body)
	}
	resp, err = client.Get(base + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); body != "chunk0;chunk1;chunk2;" {
		t.Errorf("stream %q", body)
	}
	resp, err = client.Post(base+"/echo", "text/plain", bytes.NewReader([]byte("h2 body")))
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); body != "h2 body" {
		t.Errorf("echo %q", body)
	}
}

// The first requests may arrive concurrently: the chains are composed once.
func TestServeHTTPConcurrentFirstUse(t *testing.T) {
	s := New(Config{})
	netHTTPRoutes(s)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest("GET", "/users/"+strconv.Itoa(i), nil))
			if rec.Code != 200 || !strings.HasPrefix(rec.Body.String(), "user "+strconv.Itoa(i)+" ") {
				t.Errorf("%d: %d %q", i, rec.Code, rec.Body.String())
			}
		})
	}
	wg.Wait()
	defer func() {
		if recover() == nil {
			t.Error("registering a route after ServeHTTP did not panic")
		}
	}()
	s.GET("/late", func(c *Context) error { return nil })
}

// A server both started and used through ServeHTTP composes its chains once.
func TestServeHTTPAndStart(t *testing.T) {
	t.Parallel()
	var count int
	var mu sync.Mutex
	s, addr := startServer(t, Config{}, func(s *Server) {
		s.Use(func(next HandlerFunc) HandlerFunc {
			mu.Lock()
			count++ // once per route at composition
			mu.Unlock()
			return next
		})
		s.GET("/x", func(c *Context) error { return c.String(200, "x") })
	})
	rec := httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	resp, err := adaptClient(t).Get("http://" + addr + "/x")
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); body != "x" || rec.Body.String() != "x" {
		t.Errorf("%q %q", body, rec.Body.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if count != 4 { // the route, not-found, method-not-allowed, OPTIONS * and 501
		t.Errorf("middleware composed %d times, want 4", count)
	}
}

// Celeris mounted inside net/http, inside Celeris (through Adapt).
func TestServeHTTPNested(t *testing.T) {
	t.Parallel()
	inner := New(Config{})
	inner.GET("/deep/:x", func(c *Context) error { return c.String(200, "deep "+c.Param("x")) })
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/deep/:x", Adapt(inner))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/deep/end", nil)
	resp, err := adaptClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); body != "deep end" {
		t.Errorf("got %q", body)
	}
}

// Mounted in net/http (Server.ServeHTTP), c.Context() is the net/http
// request's context, through the writer as over the engines
// (httpmsg.ContextWriter).
func TestServeHTTPRequestContext(t *testing.T) {
	type key struct{}
	s := New(Config{})
	s.GET("/ctx", func(c *Context) error {
		v, _ := c.Context().Value(key{}).(string)
		return c.String(http.StatusOK, v+" "+fmt.Sprint(c.Context().Err()))
	})
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "value"))
	cancel()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/ctx", nil).WithContext(ctx))
	if got := rec.Body.String(); got != "value context canceled" {
		t.Fatalf("body %q", got)
	}
}
