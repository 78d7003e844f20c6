package celerish3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	celerish3 "github.com/celeris-dev/celeris/http3"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/quic-go/quic-go/http3"
)

// started is a celeris server with HTTP/3 on, and clients for it.
type started struct {
	s      *celeris.Server
	h3     *celerish3.Server
	h3URL  string // https://127.0.0.1:PORT over UDP
	tlsURL string // the same port over TCP
	cert   *selfcert.Cert
	client *http.Client // quic-go's HTTP/3 client
	tr     *http3.Transport
}

// slowCancelled is closed by /slow when its request's context ends.
var slowCancelled = make(chan struct{}, 16)

func routes(s *celeris.Server) {
	s.GET("/hello", func(c *celeris.Context) error {
		return c.String(200, "hello "+c.Proto())
	})
	s.GET("/users/:id", func(c *celeris.Context) error {
		c.SetHeader("X-Custom", "yes")
		return c.JSON(200, map[string]string{"id": c.Param("id"), "q": c.Query("q")})
	})
	s.POST("/upload", func(c *celeris.Context) error {
		h := sha256.New()
		n, err := io.Copy(h, c.BodyReader())
		if err != nil {
			return err
		}
		return c.String(200, fmt.Sprintf("%d %s", n, hex.EncodeToString(h.Sum(nil))))
	})
	s.GET("/download/:mib", func(c *celeris.Context) error {
		mib, err := c.ParamInt("mib")
		if err != nil {
			return err
		}
		w, err := c.StreamLength(200, "application/octet-stream", int64(mib)<<20)
		if err != nil {
			return err
		}
		chunk := bytes.Repeat([]byte("0123456789abcdef"), 64<<10/16)
		for i := 0; i < mib*16; i++ {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	})
	s.GET("/sse", func(c *celeris.Context) error {
		w, err := c.Stream(200, "text/event-stream")
		if err != nil {
			return err
		}
		for i := 0; i < 3; i++ {
			fmt.Fprintf(w, "data: %d\n\n", i)
			if err := w.Flush(); err != nil {
				return err
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	})
	s.GET("/slow", func(c *celeris.Context) error {
		select {
		case <-c.Context().Done():
			slowCancelled <- struct{}{}
			return c.Context().Err()
		case <-time.After(20 * time.Second):
			return c.String(200, "late")
		}
	})
	s.GET("/trailers", func(c *celeris.Context) error {
		c.SetTrailer("X-Checksum", "abc123")
		w, err := c.Stream(200, "text/plain")
		if err != nil {
			return err
		}
		_, err = w.Write([]byte("body"))
		return err
	})
	s.GET("/file", func(c *celeris.Context) error { return c.File("testdata/aioquic_client.py") })
	s.POST("/echo-trailers", func(c *celeris.Context) error {
		b, err := c.Body()
		if err != nil {
			return err
		}
		tr := ""
		c.VisitTrailers(func(name, value string) {
			if strings.EqualFold(name, "X-Sum") {
				tr += value
			}
		})
		return c.String(200, string(b)+"|"+tr)
	})
}

// heldGate holds the middleware of /held after its handler answered, until
// a test lets it return.
var heldGate = make(chan struct{}, 1)

func heldRoutes(s *celeris.Server) {
	g := s.Group("/held", func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			err := next(c)
			<-heldGate
			return err
		}
	})
	g.GET("/:size", func(c *celeris.Context) error {
		n, err := c.ParamInt("size")
		if err != nil {
			return err
		}
		return c.Blob(200, "application/octet-stream", bytes.Repeat([]byte("h"), n))
	})
}

func start(t *testing.T, cfg celerish3.Config) *started {
	t.Helper()
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{
		Addr:      "127.0.0.1:0",
		TLSAddr:   "127.0.0.1:0",
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}},
		Engine:    celeris.EngineStd,
	})
	routes(s)
	heldRoutes(s)
	h3 := celerish3.Enable(s, cfg)
	celeristest.Start(t, s)
	addr, err := h3.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool(), ServerName: "localhost"}}
	t.Cleanup(func() { _ = tr.Close() })
	return &started{
		s: s, h3: h3, cert: cert, tr: tr,
		h3URL:  "https://" + addr.String(),
		tlsURL: "https://" + s.TLSAddr().String(),
		client: &http.Client{Transport: tr, Timeout: 60 * time.Second},
	}
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("GET %s body: %v", url, err)
	}
	return resp, string(b)
}

// TestQuicGoClient: quic-go's HTTP/3 client against the server's routes: small
// GETs, JSON with params and a query, uploads, a 64 MiB streamed download,
// server-sent events, trailers both ways.
func TestQuicGoClient(t *testing.T) {
	st := start(t, celerish3.Config{})
	t.Run("get", func(t *testing.T) {
		resp, body := get(t, st.client, st.h3URL+"/hello")
		if resp.StatusCode != 200 || body != "hello HTTP/3.0" || resp.ProtoMajor != 3 {
			t.Fatalf("got %d %q over %s", resp.StatusCode, body, resp.Proto)
		}
		if resp.Header.Get("Date") == "" || resp.ContentLength != int64(len(body)) {
			t.Fatalf("header %v, content-length %d", resp.Header, resp.ContentLength)
		}
		if v := resp.Header.Get("Alt-Svc"); v != "" {
			t.Fatalf("HTTP/3 response advertises itself: %q", v)
		}
	})
	t.Run("json", func(t *testing.T) {
		resp, body := get(t, st.client, st.h3URL+"/users/42?q=x%20y")
		if resp.StatusCode != 200 || body != `{"id":"42","q":"x y"}` || resp.Header.Get("X-Custom") != "yes" ||
			resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("got %d %q %v", resp.StatusCode, body, resp.Header)
		}
	})
	t.Run("404", func(t *testing.T) {
		resp, _ := get(t, st.client, st.h3URL+"/nope")
		if resp.StatusCode != 404 {
			t.Fatalf("got %d", resp.StatusCode)
		}
	})
	t.Run("head", func(t *testing.T) {
		resp, err := st.client.Head(st.h3URL + "/hello")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(b) != 0 || resp.ContentLength != int64(len("hello HTTP/3.0")) {
			t.Fatalf("got %d %q length %d", resp.StatusCode, b, resp.ContentLength)
		}
	})
	t.Run("upload", func(t *testing.T) {
		for _, size := range []int{0, 1, 100 << 10, 3 << 20} {
			body := bytes.Repeat([]byte{'u'}, size)
			sum := sha256.Sum256(body)
			resp, err := st.client.Post(st.h3URL+"/upload", "application/octet-stream", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := fmt.Sprintf("%d %s", size, hex.EncodeToString(sum[:]))
			if resp.StatusCode != 200 || string(b) != want {
				t.Fatalf("size %d: got %d %q", size, resp.StatusCode, b)
			}
		}
	})
	t.Run("upload-unknown-length", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			for i := 0; i < 10; i++ {
				_, _ = pw.Write(bytes.Repeat([]byte{'x'}, 10<<10))
			}
			_ = pw.Close()
		}()
		resp, err := st.client.Post(st.h3URL+"/upload", "application/octet-stream", pr)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(string(b), "102400 ") {
			t.Fatalf("got %d %q", resp.StatusCode, b)
		}
	})
	t.Run("upload-too-large", func(t *testing.T) {
		body := bytes.Repeat([]byte{'u'}, 5<<20) // the server's default limit is 4 MiB
		resp, err := st.client.Post(st.h3URL+"/upload", "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Fatalf("got %d", resp.StatusCode)
		}
	})
	t.Run("upload-too-large-unknown-length", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			chunk := bytes.Repeat([]byte{'x'}, 64<<10)
			for i := 0; i < 80; i++ { // 5 MiB, past the 4 MiB limit
				if _, err := pw.Write(chunk); err != nil {
					break
				}
			}
			_ = pw.Close()
		}()
		resp, err := st.client.Post(st.h3URL+"/upload", "application/octet-stream", pr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Fatalf("got %d", resp.StatusCode)
		}
	})
	t.Run("download-64MiB", func(t *testing.T) {
		resp, err := st.client.Get(st.h3URL + "/download/64")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil || n != 64<<20 || resp.ContentLength != 64<<20 {
			t.Fatalf("read %d bytes (content-length %d): %v", n, resp.ContentLength, err)
		}
	})
	t.Run("sse", func(t *testing.T) {
		resp, err := st.client.Get(st.h3URL + "/sse")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		buf := make([]byte, 64)
		// The first event arrives before the handler wrote the others.
		n, err := resp.Body.Read(buf)
		if err != nil || string(buf[:n]) != "data: 0\n\n" {
			t.Fatalf("first read %q: %v", buf[:n], err)
		}
		rest, _ := io.ReadAll(resp.Body)
		if string(rest) != "data: 1\n\ndata: 2\n\n" {
			t.Fatalf("rest %q", rest)
		}
	})
	t.Run("file-range", func(t *testing.T) {
		whole, err := os.ReadFile("testdata/aioquic_client.py")
		if err != nil {
			t.Fatal(err)
		}
		resp, body := get(t, st.client, st.h3URL+"/file")
		if resp.StatusCode != 200 || body != string(whole) || resp.Header.Get("Accept-Ranges") != "bytes" {
			t.Fatalf("whole: %d, %d bytes, %v", resp.StatusCode, len(body), resp.Header)
		}
		req, _ := http.NewRequest("GET", st.h3URL+"/file", nil)
		req.Header.Set("Range", "bytes=3-9")
		resp, err = st.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 206 || string(b) != string(whole[3:10]) ||
			resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 3-9/%d", len(whole)) {
			t.Fatalf("range: %d %q %v", resp.StatusCode, b, resp.Header)
		}
		req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
		req.Header.Del("Range")
		if resp, err = st.client.Do(req); err != nil || resp.StatusCode != 304 {
			t.Fatalf("conditional: %v %v", resp, err)
		}
		resp.Body.Close()
	})
	t.Run("trailers", func(t *testing.T) {
		resp, body := get(t, st.client, st.h3URL+"/trailers")
		if body != "body" || resp.Trailer.Get("X-Checksum") != "abc123" {
			t.Fatalf("got %q trailer %v", body, resp.Trailer)
		}
	})
	t.Run("request-trailers", func(t *testing.T) {
		req, _ := http.NewRequest("POST", st.h3URL+"/echo-trailers", io.NopCloser(strings.NewReader("abc")))
		req.Trailer = http.Header{"X-Sum": {"s1"}}
		req.ContentLength = -1
		resp, err := st.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "abc|s1" {
			t.Fatalf("got %d %q", resp.StatusCode, b)
		}
	})
}

// TestAltSvc: HTTP/1.1 and HTTP/2 responses over TLS advertise HTTP/3 on the
// UDP port; plaintext ones do not.
// TestAnswerLeavesAfterTheChainReturns: a complete answer reaches the client
// once the handler's middleware returned, as on HTTP/1.1 and HTTP/2 (and as
// net/http flushes when the handler returns): a small one waits whole, a large
// one for its last bytes.
func TestAnswerLeavesAfterTheChainReturns(t *testing.T) {
	st := start(t, celerish3.Config{})
	for _, size := range []int{0, 5, 16 << 10, 300 << 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			type result struct {
				n   int
				err error
			}
			got := make(chan result, 1)
			go func() {
				resp, err := st.client.Get(fmt.Sprintf("%s/held/%d", st.h3URL, size))
				if err != nil {
					got <- result{err: err}
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				got <- result{len(b), err}
			}()
			select {
			case r := <-got:
				t.Fatalf("the client had the answer (%d bytes, %v) while the middleware still ran", r.n, r.err)
			case <-time.After(200 * time.Millisecond):
			}
			heldGate <- struct{}{}
			select {
			case r := <-got:
				if r.err != nil || r.n != size {
					t.Fatalf("read %d bytes, %v; want %d", r.n, r.err, size)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no answer after the middleware returned")
			}
		})
	}
}

func TestAltSvc(t *testing.T) {
	st := start(t, celerish3.Config{AltSvcMaxAge: time.Hour})
	_, port, _ := strings.Cut(strings.TrimPrefix(st.h3URL, "https://"), ":")
	want := `h3=":` + port + `"; ma=3600`
	for _, h2 := range []bool{true, false} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: st.cert.Pool(), ServerName: "localhost"}, ForceAttemptHTTP2: h2}
		if !h2 {
			tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		c := &http.Client{Transport: tr}
		resp, _ := get(t, c, st.tlsURL+"/hello")
		tr.CloseIdleConnections()
		if got := resp.Header.Get("Alt-Svc"); got != want || resp.ProtoMajor != map[bool]int{true: 2, false: 1}[h2] {
			t.Fatalf("%s: Alt-Svc %q, want %q", resp.Proto, got, want)
		}
	}
	resp, _ := get(t, http.DefaultClient, "http://"+st.s.Addr().String()+"/hello")
	if v := resp.Header.Get("Alt-Svc"); v != "" {
		t.Fatalf("plaintext response has Alt-Svc %q", v)
	}
}

// TestClientCancel: a client that gives up on a slow request resets its stream;
// the handler's context is cancelled.
func TestClientCancel(t *testing.T) {
	st := start(t, celerish3.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", st.h3URL+"/slow", nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := st.client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	select {
	case <-slowCancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled")
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("client: %v", err)
	}
	// The connection goes on serving.
	if resp, body := get(t, st.client, st.h3URL+"/hello"); resp.StatusCode != 200 || body != "hello HTTP/3.0" {
		t.Fatalf("after cancel: %d %q", resp.StatusCode, body)
	}
}

// TestShutdownDrains: Shutdown sends GOAWAY and lets a request in flight
// finish; Stats counts the HTTP/3 connection until it closes.
func TestShutdownDrains(t *testing.T) {
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{
		Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", Engine: celeris.EngineStd,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}},
	})
	release := make(chan struct{})
	var entered atomic.Bool
	s.GET("/wait", func(c *celeris.Context) error {
		entered.Store(true)
		<-release
		return c.String(200, "done")
	})
	h3 := celerish3.Enable(s, celerish3.Config{})
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	<-s.Ready()
	addr, err := h3.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool(), ServerName: "localhost"}}
	defer tr.Close()
	client := &http.Client{Transport: tr}
	type result struct {
		body string
		err  error
	}
	resc := make(chan result, 1)
	go func() {
		resp, err := client.Get("https://" + addr.String() + "/wait")
		if err != nil {
			resc <- result{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		resc <- result{string(b), err}
	}()
	for !entered.Load() {
		time.Sleep(5 * time.Millisecond)
	}
	if n := s.Stats().OpenConnections; n < 1 {
		t.Fatalf("open connections %d", n)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	time.Sleep(100 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	default:
	}
	close(release)
	if r := <-resc; r.err != nil || r.body != "done" {
		t.Fatalf("in-flight request: %q %v", r.body, r.err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("Start: %v", err)
	}
}

// TestListenError: a UDP address in use fails Start with the listen error, and
// the server's other listeners stop.
func TestListenError(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	cert, err := selfcert.New("localhost")
	if err != nil {
		t.Fatal(err)
	}
	s := celeris.New(celeris.Config{
		Addr: "127.0.0.1:0", TLSAddr: "127.0.0.1:0", Engine: celeris.EngineStd,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}},
	})
	h3 := celerish3.Enable(s, celerish3.Config{Addr: pc.LocalAddr().String()})
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	select {
	case err := <-errc:
		if err == nil || errors.Is(err, http.ErrServerClosed) || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("Start: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return")
	}
	if _, err := h3.WaitReady(); err == nil {
		t.Fatal("WaitReady: no error")
	}
}
