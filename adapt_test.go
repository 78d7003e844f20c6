package celeris

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h1"
)

func adaptClient(t testing.TB) *http.Client {
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func mustGet(t *testing.T, client *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp, bodyString(t, resp)
}

func TestAdaptServeMux(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from net/http")
	})
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "item %s q=%s", r.PathValue("id"), r.URL.Query().Get("q"))
	})
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.Any("/nethttp/*rest", Adapt(http.StripPrefix("/nethttp", mux)))
	})
	client := adaptClient(t)
	base := "http://" + addr

	resp, body := mustGet(t, client, base+"/nethttp/hello")
	if resp.StatusCode != 200 || body != "hello from net/http" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if resp.ContentLength != int64(len(body)) {
		t.Errorf("ContentLength = %d, want %d (a small response goes out whole)", resp.ContentLength, len(body))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("sniffed Content-Type = %q", ct)
	}

	resp, body = mustGet(t, client, base+"/nethttp/items/42?q=a%20b")
	if resp.StatusCode != 200 || body != "item 42 q=a b" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain" {
		t.Errorf("Content-Type = %q", ct)
	}

	resp, _ = mustGet(t, client, base+"/nethttp/missing")
	if resp.StatusCode != 404 {
		t.Errorf("mux 404: got %d", resp.StatusCode)
	}
}

func TestAdaptRequest(t *testing.T) {
	t.Parallel()
	type seen struct {
		r    *http.Request
		body string
	}
	seenc := make(chan seen, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.POST("/users/:id/files/*path", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			seenc <- seen{r: r, body: string(b)}
			w.WriteHeader(http.StatusCreated)
		}))
	})
	req, _ := http.NewRequest("POST", "http://"+addr+"/users/7/files/a/b%20c.txt?x=1&y=2", strings.NewReader("payload"))
	req.Header.Set("X-Custom", "v1")
	req.Header.Add("X-Custom", "v2")
	req.Header.Set("Content-Type", "text/plain")
	resp, err := adaptClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("status %d", resp.StatusCode)
	}
	got := <-seenc
	r, gotBody := got.r, got.body
	checks := []struct{ name, got, want string }{
		{name: "Method", got: r.Method, want: "POST"},
		{name: "URL.Path", got: r.URL.Path, want: "/users/7/files/a/b c.txt"},
		{name: "URL.RawQuery", got: r.URL.RawQuery, want: "x=1&y=2"},
		{name: "RequestURI", got: r.RequestURI, want: "/users/7/files/a/b%20c.txt?x=1&y=2"},
		{name: "Proto", got: r.Proto, want: "HTTP/1.1"},
		{name: "Host", got: r.Host, want: addr},
		{name: "Header X-Custom", got: strings.Join(r.Header["X-Custom"], ","), want: "v1,v2"},
		{name: "Header Host", got: r.Header.Get("Host"), want: ""},
		{name: "PathValue id", got: r.PathValue("id"), want: "7"},
		{name: "PathValue path", got: r.PathValue("path"), want: "a/b%20c.txt"},
		{name: "body", got: gotBody, want: "payload"},
		{name: "ContentLength", got: strconv.FormatInt(r.ContentLength, 10), want: "7"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if !strings.HasPrefix(r.RemoteAddr, "127.0.0.1:") {
		t.Errorf("RemoteAddr = %q", r.RemoteAddr)
	}
	if r.ProtoMajor != 1 || r.ProtoMinor != 1 {
		t.Errorf("ProtoMajor/Minor = %d/%d", r.ProtoMajor, r.ProtoMinor)
	}
	// The strings are copies: they survive the recycling of the Context.
	if _, err := adaptClient(t).Get("http://" + addr + "/other"); err != nil {
		t.Fatal(err)
	}
	if r.URL.Path != "/users/7/files/a/b c.txt" || r.Header.Get("X-Custom") != "v1" {
		t.Error("request strings changed after the handler returned")
	}
	if _, err := r.Body.Read(make([]byte, 1)); err != http.ErrBodyReadAfterClose {
		t.Errorf("Read after return: %v, want ErrBodyReadAfterClose", err)
	}
}

// The handler flushes a first chunk and writes the second only after the client
// has read the first: streaming works only if the flush reaches the client.
func TestAdaptFlushStreams(t *testing.T) {
	release := make(chan struct{})
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/flush", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "first\n")
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-time.After(10 * time.Second):
				return
			}
			io.WriteString(w, "second\n")
			if err := http.NewResponseController(w).Flush(); err != nil {
				t.Errorf("ResponseController.Flush: %v", err)
			}
			io.WriteString(w, "third\n")
		}))
	})
	resp, err := adaptClient(t).Get("http://" + addr + "/flush")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ContentLength != -1 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("ContentLength %d, Content-Type %q", resp.ContentLength, resp.Header.Get("Content-Type"))
	}
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "first\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(release)
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "second\nthird\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
}

func TestAdaptLargeResponse(t *testing.T) {
	const size = 8 << 20
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = byte(i*7 + i>>11)
	}
	want := sha256.Sum256(payload)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/big", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", "999") // ignored: Celeris frames the response
			for off := 0; off < size; off += 10000 {
				w.Write(payload[off:min(off+10000, size)])
			}
		}))
		s.GET("/bigone", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write(payload) // one write, no Content-Type: sniffed from the start
		}))
		s.GET("/bigstring", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, string(payload))
		}))
	})
	for _, path := range []string{"/big", "/bigone", "/bigstring"} {
		resp, err := adaptClient(t).Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(got) != size || sha256.Sum256(got) != want {
			t.Fatalf("%s: got %d bytes (want %d), content differs", path, len(got), size)
		}
		if resp.ContentLength != -1 {
			t.Errorf("%s: ContentLength %d, want a streamed (chunked) response", path, resp.ContentLength)
		}
		if path == "/bigone" && resp.Header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("%s: Content-Type %q", path, resp.Header.Get("Content-Type"))
		}
	}
}

func TestAdaptRequestBodyStream(t *testing.T) {
	t.Parallel()
	const size = 4 << 20
	_, addr := startServer(t, Config{MaxRequestBodySize: 8 << 20}, func(s *Server) {
		s.POST("/echo-len", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			h := sha256.New()
			n, err := io.Copy(h, r.Body)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
		}))
	})
	payload := bytes.Repeat([]byte("0123456789abcdef"), size/16)
	sum := sha256.Sum256(payload)
	resp, err := adaptClient(t).Post("http://"+addr+"/echo-len", "application/octet-stream", bytes.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	body := bodyString(t, resp)
	if want := fmt.Sprintf("%d %x", size, sum); body != want {
		t.Fatalf("got %q, want %q", body, want)
	}
}

// Chunked request trailers reach r.Trailer once the body was read to EOF.
func TestAdaptRequestTrailer(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.POST("/t", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s|%s", b, r.Trailer.Get("X-Checksum"))
		}))
	})
	rc := dialRaw(t, addr)
	rc.send("POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTrailer: X-Checksum\r\n\r\n" +
		"5\r\nhello\r\n0\r\nX-Checksum: abc\r\n\r\n")
	resp := rc.readResponse("POST")
	if body := bodyString(t, resp); body != "hello|abc" {
		t.Fatalf("got %q", body)
	}
}

func TestAdaptResponseDetails(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/head", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Method", r.Method)
			io.WriteString(w, "twelve bytes")
		}))
		s.GET("/nocontent", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
			if _, err := w.Write([]byte("x")); err != http.ErrBodyNotAllowed {
				t.Errorf("Write on 204: %v", err)
			}
		}))
		s.GET("/headers", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			h := w.Header()
			h.Add("X-Multi", "a")
			h.Add("X-Multi", "b")
			h.Set("X-Split", "evil\r\nSet-Cookie: x=1")
			h.Set("Date", "Mon, 01 Jan 2001 00:00:00 GMT")
			h["Content-Type"] = nil // no sniffing
			w.WriteHeader(http.StatusTeapot)
			w.WriteHeader(http.StatusOK) // superfluous: ignored
			w.Write([]byte("<html>"))
		}))
		s.GET("/early", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints) // informational: not sent
			w.WriteHeader(http.StatusAccepted)
		}))
		s.GET("/panic", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			panic("boom")
		}))
		s.GET("/badcode", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(42)
		}))
		s.GET("/empty", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {}))
	})
	client := adaptClient(t)
	base := "http://" + addr

	req, _ := http.NewRequest("HEAD", base+"/head", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Method") != "HEAD" || resp.ContentLength != 12 {
		t.Errorf("HEAD: %d %q len %d", resp.StatusCode, resp.Header.Get("X-Method"), resp.ContentLength)
	}

	resp, body := mustGet(t, client, base+"/nocontent")
	if resp.StatusCode != 204 || body != "" {
		t.Errorf("204: %d %q", resp.StatusCode, body)
	}

	resp, body = mustGet(t, client, base+"/headers")
	if resp.StatusCode != http.StatusTeapot || body != "<html>" {
		t.Errorf("headers: %d %q", resp.StatusCode, body)
	}
	if got := strings.Join(resp.Header["X-Multi"], ","); got != "a,b" {
		t.Errorf("X-Multi = %q", got)
	}
	if got := resp.Header.Get("X-Split"); got != "evil  Set-Cookie: x=1" || resp.Header.Get("Set-Cookie") != "" {
		t.Errorf("X-Split = %q, Set-Cookie = %q", got, resp.Header.Get("Set-Cookie"))
	}
	if len(resp.Header["Date"]) != 1 || resp.Header.Get("Date") == "Mon, 01 Jan 2001 00:00:00 GMT" {
		t.Errorf("Date = %q", resp.Header["Date"])
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		t.Errorf("Content-Type = %q, want none", ct)
	}

	resp, _ = mustGet(t, client, base+"/early")
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("early hints: %d", resp.StatusCode)
	}
	for _, p := range []string{"/panic", "/badcode"} {
		resp, _ = mustGet(t, client, base+p)
		if resp.StatusCode != 500 {
			t.Errorf("%s: %d, want 500", p, resp.StatusCode)
		}
	}
	resp, body = mustGet(t, client, base+"/empty")
	if resp.StatusCode != 200 || body != "" || resp.ContentLength != 0 {
		t.Errorf("empty: %d %q %d", resp.StatusCode, body, resp.ContentLength)
	}
}

// A SetPath rewrite (Pre middleware) is what the adapted handler sees.
func TestAdaptRewrittenPath(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.Pre(func(next HandlerFunc) HandlerFunc {
			return func(c *Context) error {
				if strings.HasPrefix(c.Path(), "/old/") {
					c.SetPath("/new/" + strings.TrimPrefix(c.Path(), "/old/"))
				}
				return next(c)
			}
		})
		s.GET("/new/*rest", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s %s", r.URL.Path, r.URL.RawQuery, r.RequestURI)
		}))
	})
	_, body := mustGet(t, adaptClient(t), "http://"+addr+"/old/a%2Fb?k=v")
	if want := "/new/a/b k=v /old/a%2Fb?k=v"; body != want {
		t.Fatalf("got %q, want %q", body, want)
	}
}

type ctxKey string

func TestWrapMiddleware(t *testing.T) {
	t.Parallel()
	addHeader := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Frame-Options", "DENY")
			ctx := context.WithValue(r.Context(), ctxKey("user"), "alice")
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
	auth := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer ok" {
				w.Header().Set("WWW-Authenticate", "Bearer")
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	statusc := make(chan int, 1)
	recordStatus := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			if r.Header.Get("Authorization") != "" {
				statusc <- sw.status
			}
		})
	}
	ctxAfterc := make(chan any, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		g := s.Group("/api", WrapMiddleware(recordStatus), WrapMiddleware(addHeader), WrapMiddleware(auth))
		g.GET("/me", func(c *Context) error {
			user, _ := c.Context().Value(ctxKey("user")).(string)
			return c.String(http.StatusAccepted, "hello "+user)
		})
		s.GET("/ctx", func(c *Context) error { return c.String(200, "ok") },
			func(next HandlerFunc) HandlerFunc {
				return func(c *Context) error {
					err := next(c)
					ctxAfterc <- c.Context().Value(ctxKey("user"))
					return err
				}
			}, WrapMiddleware(addHeader))
	})
	client := adaptClient(t)

	resp, body := mustGet(t, client, "http://"+addr+"/api/me")
	if resp.StatusCode != 401 || body != "unauthorized\n" || resp.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("unauthenticated: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("short-circuit response lost the outer middleware's header")
	}

	req, _ := http.NewRequest("GET", "http://"+addr+"/api/me", nil)
	req.Header.Set("Authorization", "Bearer ok")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body = bodyString(t, resp)
	if resp.StatusCode != http.StatusAccepted || body != "hello alice" || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("authenticated: %d %q %v", resp.StatusCode, body, resp.Header)
	}
	if status := <-statusc; status != http.StatusAccepted {
		t.Errorf("status-recording wrapper saw %d, want 202", status)
	}

	resp, body = mustGet(t, client, "http://"+addr+"/ctx")
	if resp.StatusCode != 200 || body != "ok" || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("ctx: %d %q", resp.StatusCode, body)
	}
	if ctxAfter := <-ctxAfterc; ctxAfter != nil {
		t.Errorf("the middleware's context leaked out of it: %v", ctxAfter)
	}
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// BenchmarkAdapt compares a small response from a native handler with the same
// response from a net/http handler through Adapt, over the full HTTP/1.1 cycle
// without network.
func BenchmarkAdapt(b *testing.B) {
	s := New(Config{})
	s.GET("/native/:id", func(c *Context) error {
		c.SetHeader("X-Id", c.Param("id"))
		return c.String(200, "hello")
	}).Inline()
	s.GET("/adapt/:id", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Id", r.PathValue("id"))
		io.WriteString(w, "hello")
	})).Inline()
	s.freeze()
	for _, path := range []string{"/native/42", "/adapt/42"} {
		b.Run(path[1:strings.LastIndexByte(path, '/')], func(b *testing.B) {
			fc := &fakeConn{}
			cn := h1.NewConn(fc, &s.h1cfg)
			req := []byte("GET " + path + " HTTP/1.1\r\nHost: example.com\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n")
			b.ReportAllocs()
			for b.Loop() {
				fc.out = fc.out[:0]
				if n, err := cn.OnData(req); n != len(req) || err != nil {
					b.Fatal(n, err)
				}
			}
			if !bytes.Contains(fc.out, []byte("X-Id: 42")) || !bytes.HasSuffix(fc.out, []byte("hello")) {
				b.Fatalf("response %q", fc.out)
			}
		})
	}
}

// The same adapted handlers over HTTP/2 (h2c with prior knowledge).
func TestAdaptH2C(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/hello", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello from net/http over %s", r.Proto)
		}))
		s.GET("/flush", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "first\n")
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-time.After(10 * time.Second):
				return
			}
			io.WriteString(w, "second\n")
		}))
		s.POST("/len", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			n, err := io.Copy(io.Discard, r.Body)
			fmt.Fprintf(w, "%d %v", n, err)
		}))
	})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	base := "http://" + addr

	resp, err := client.Get(base + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); resp.ProtoMajor != 2 || body != "hello from net/http over HTTP/2.0" {
		t.Fatalf("%s %q", resp.Proto, body)
	}

	resp, err = client.Get(base + "/flush")
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

	const size = 1 << 20
	resp, err = client.Post(base+"/len", "application/octet-stream", bytes.NewReader(make([]byte, size)))
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); body != fmt.Sprintf("%d <nil>", size) {
		t.Fatalf("len: %q", body)
	}
}

// nativeBoth is an http.Handler that also serves natively (NativeHandler).
type nativeBoth struct{}

func (nativeBoth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, "via net/http")
}

func (nativeBoth) ServeCeleris(c *Context) error {
	return c.String(http.StatusOK, "native "+c.Method())
}

// Adapt of a NativeHandler runs its ServeCeleris; the same value still serves
// through ServeHTTP where it is wrapped (here by StripPrefix, which hides it).
func TestAdaptNativeHandler(t *testing.T) {
	t.Parallel()
	var h http.Handler = nativeBoth{}
	if _, ok := h.(NativeHandler); !ok {
		t.Fatal("nativeBoth is not a NativeHandler")
	}
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/native", Adapt(h))
		s.GET("/wrapped/*rest", Adapt(http.StripPrefix("/wrapped", h)))
	})
	client := adaptClient(t)
	for path, want := range map[string]string{
		"/native":    "native GET",
		"/wrapped/x": "via net/http",
	} {
		resp, body := mustGet(t, client, "http://"+addr+path)
		if resp.StatusCode != 200 || body != want {
			t.Errorf("%s: %d %q, want %q", path, resp.StatusCode, body, want)
		}
	}
}
