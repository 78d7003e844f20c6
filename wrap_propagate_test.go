package celeris

import (
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// Hand-written equivalents of chi's middleware (the interop/nethttp module runs
// chi's own): each changes the request or wraps the writer as chi's does.

// realIP sets RemoteAddr from X-Real-IP, as chi's middleware.RealIP.
func realIP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ip := r.Header.Get("X-Real-IP"); ip != "" {
			r.RemoteAddr = ip
		}
		next.ServeHTTP(w, r)
	})
}

// stripSlashes trims a trailing slash from r.URL.Path in place, as chi's
// middleware.StripSlashes does without a chi routing context.
func stripSlashes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && p[len(p)-1] == '/' {
			r.URL.Path = p[:len(p)-1]
		}
		next.ServeHTTP(w, r)
	})
}

// rewrite changes header fields and the query on a copy of the request.
func rewrite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(context.WithValue(r.Context(), wrapTestKey("k"), "v"))
		r2.Header.Set("X-Added", "yes")
		r2.Header.Del("X-Removed")
		r2.URL.RawQuery = "q=rewritten"
		next.ServeHTTP(w, r2)
	})
}

type wrapTestKey string

// gzipWriter compresses what is written, as chi's middleware.Compress.
type gzipWriter struct {
	http.ResponseWriter
	gz *gzip.Writer
}

func (g *gzipWriter) WriteHeader(code int) {
	g.Header().Set("Content-Encoding", "gzip")
	g.Header().Del("Content-Length")
	g.ResponseWriter.WriteHeader(code)
}
func (g *gzipWriter) Write(p []byte) (int, error) { return g.gz.Write(p) }

func gzipMW(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gz := gzip.NewWriter(w)
		defer gz.Close()
		next.ServeHTTP(&gzipWriter{ResponseWriter: w, gz: gz}, r)
	})
}

// countingLogger records status and bytes written, as chi's middleware.Logger.
type countingLogger struct {
	mu    sync.Mutex
	lines []string
}

type countWriter struct {
	http.ResponseWriter
	status, bytes int
}

func (w *countWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}
func (w *countWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = 200
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += n
	return n, err
}

func (l *countingLogger) mw(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &countWriter{ResponseWriter: w}
		next.ServeHTTP(cw, r)
		l.mu.Lock()
		l.lines = append(l.lines, r.URL.Path+" "+strconv.Itoa(cw.status)+" "+strconv.Itoa(cw.bytes))
		l.mu.Unlock()
	})
}

func (l *countingLogger) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lines) == 0 {
		return ""
	}
	return l.lines[len(l.lines)-1]
}

func TestWrapMiddlewarePropagatesRequest(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{TrustedProxies: nil}, func(s *Server) {
		s.Pre(WrapMiddleware(stripSlashes))
		s.GET("/ip", func(c *Context) error {
			return c.String(200, c.ClientIP()+" "+c.RemoteAddr().String())
		}, WrapMiddleware(realIP))
		s.GET("/rw", func(c *Context) error {
			v, _ := c.Context().Value(wrapTestKey("k")).(string)
			return c.String(200, c.Header("X-Added")+"|"+c.Header("X-Removed")+"|"+c.Query("q")+"|"+v+"|"+c.Header("X-Kept"))
		}, WrapMiddleware(rewrite))
		s.POST("/limited", func(c *Context) error {
			b, err := c.Body()
			if err != nil {
				return err
			}
			return c.String(200, string(b))
		}, WrapMiddleware(func(h http.Handler) http.Handler { return http.MaxBytesHandler(h, 5) }))
		s.POST("/limited-form", func(c *Context) error {
			var v struct {
				A string `form:"a"`
			}
			if err := c.Bind(&v); err != nil {
				return err
			}
			return c.String(200, v.A)
		}, WrapMiddleware(func(h http.Handler) http.Handler { return http.MaxBytesHandler(h, 5) }))
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		do := func(method, path, body string, h ...string) (int, string) {
			req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
			if body == "" {
				req.Body = nil
			}
			for i := 0; i+1 < len(h); i += 2 {
				req.Header.Set(h[i], h[i+1])
			}
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, bodyString(t, resp)
		}
		if code, body := do("GET", "/ip/", "", "X-Real-IP", "203.0.113.9"); code != 200 || body != "203.0.113.9 203.0.113.9" {
			t.Errorf("RealIP + StripSlashes (Pre): %d %q", code, body)
		}
		if code, body := do("GET", "/rw?q=orig", "", "X-Removed", "1", "X-Kept", "k"); code != 200 || body != "yes||rewritten|v|k" {
			t.Errorf("rewrite: %d %q", code, body)
		}
		if code, body := do("POST", "/limited", "1234"); code != 200 || body != "1234" {
			t.Errorf("under the limit: %d %q", code, body)
		}
		if code, _ := do("POST", "/limited", "123456789"); code != 413 {
			t.Errorf("MaxBytesHandler: %d, want 413", code)
		}
		if code, _ := do("POST", "/limited-form", "a=123456789", "Content-Type", "application/x-www-form-urlencoded"); code != 413 {
			t.Errorf("MaxBytesHandler (form): %d, want 413", code)
		}
	})
}

func TestWrapMiddlewareWriterWrappers(t *testing.T) {
	t.Parallel()
	var log countingLogger
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.Use(WrapMiddleware(log.mw), WrapMiddleware(gzipMW))
		s.GET("/text", func(c *Context) error {
			c.SetHeader("X-Mine", "1")
			return c.String(201, strings.Repeat("hello ", 100))
		})
		s.GET("/err", func(c *Context) error { return NewHTTPError(418, "teapot here") })
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		for _, tc := range []struct {
			path   string
			status int
			body   string
		}{
			{"/text", 201, strings.Repeat("hello ", 100)},
			{"/err", 418, "teapot here"},
			{"/missing", 404, "Not Found"},
		} {
			req, _ := http.NewRequest("GET", "http://"+addr+tc.path, nil)
			req.Header.Set("Accept-Encoding", "gzip") // set by hand: the transport leaves the body as it is
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw := bodyString(t, resp)
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s: %d %v", tc.path, resp.StatusCode, resp.Header)
			}
			zr, err := gzip.NewReader(strings.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			plain, _ := io.ReadAll(zr)
			if string(plain) != tc.body {
				t.Errorf("%s: body %q", tc.path, plain)
			}
			if tc.path == "/text" && resp.Header.Get("X-Mine") != "1" {
				t.Errorf("handler's header lost: %v", resp.Header)
			}
			// The logger sits outside gzip: it counts the compressed bytes.
			if got, want := log.last(), tc.path+" "+strconv.Itoa(tc.status)+" "+strconv.Itoa(len(raw)); got != want {
				t.Errorf("logger %q, want %q", got, want)
			}
		}
	})
}

func TestContextRequest(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.POST("/r/:id", func(c *Context) error {
			r := c.Request()
			if c.Request() != r {
				t.Error("Request not cached")
			}
			b, _ := io.ReadAll(r.Body)
			host, _, _ := net.SplitHostPort(r.RemoteAddr)
			return c.String(200, r.Method+" "+r.URL.Path+" "+r.PathValue("id")+" "+r.URL.Query().Get("q")+" "+r.Header.Get("X-A")+" "+string(b)+" "+host)
		})
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		req, _ := http.NewRequest("POST", "http://"+addr+"/r/7?q=x", strings.NewReader("data"))
		req.Header.Set("X-A", "a")
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := bodyString(t, resp); got != "POST /r/7 7 x a data 127.0.0.1" {
			t.Errorf("got %q", got)
		}
	})
}

// TestWrapMiddlewareStreamBypassIsLoud: a streamed response cannot pass through
// the middleware's own writer; it reaches the client intact and a warning says so.
func TestWrapMiddlewareStreamBypassIsLoud(t *testing.T) {
	t.Parallel()
	var logBuf syncWriter
	_, addr := startServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logBuf, nil))}, func(s *Server) {
		s.Use(WrapMiddleware(gzipMW))
		s.GET("/stream", func(c *Context) error {
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			_, err = w.Write([]byte("streamed"))
			return err
		})
	})
	r := dialRaw(t, addr)
	r.send("GET /stream HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n")
	resp := r.readResponse("GET")
	if b := bodyString(t, resp); b != "streamed" {
		t.Errorf("body %q", b)
	}
	if !strings.Contains(logBuf.String(), "streamed response went to the client directly") {
		t.Errorf("no warning: %q", logBuf.String())
	}
}

// syncWriter is a log sink several goroutines write to.
type syncWriter = testkit.Log
