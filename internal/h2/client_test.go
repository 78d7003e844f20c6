package h2

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// xnetClient returns an h2c client from golang.org/x/net/http2.
func xnetClient() *http.Client {
	return &http.Client{Transport: &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	}, Timeout: 60 * time.Second}
}

// stdClient returns net/http's client speaking prior-knowledge h2c only.
func stdClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}, Timeout: 60 * time.Second}
}

// appHandler serves the routes the client tests use.
func appHandler() handlerFunc {
	big := bytes.Repeat([]byte("abcdefghijklmnop"), 4<<20) // 64 MiB
	return handlerFunc{
		inline: func(r *httpmsg.Request) bool { return r.Path == "/inline" || r.Path == "/inline-echo" },
		serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
			switch r.Path {
			case "/inline":
				_ = w.WriteResponse(200, []httpmsg.Field{{Name: "Content-Type", Value: "text/plain"}}, []byte("inline ok"))
			case "/slow":
				testkit.Slow(500 * time.Millisecond) // a sleep: the route is slow on purpose, other streams must not wait for it
				_ = w.WriteResponse(200, nil, []byte("slow"))
			case "/big":
				_ = w.WriteResponse(200, nil, big)
			case "/echo", "/inline-echo":
				n, sum := 0, uint64(0)
				var body io.Reader = bytes.NewReader(r.Body)
				if r.BodyReader != nil {
					body = r.BodyReader
				}
				buf := make([]byte, 32<<10)
				for {
					k, err := body.Read(buf)
					for _, b := range buf[:k] {
						sum += uint64(b)
					}
					n += k
					if err == io.EOF {
						break
					}
					if err != nil {
						_ = w.WriteResponse(500, nil, []byte(err.Error()))
						return
					}
				}
				var tr []httpmsg.Field
				for _, f := range r.Trailer {
					tr = append(tr, httpmsg.Field{Name: "X-Echo-" + f.Name, Value: f.Value})
				}
				_ = w.WriteHeader(200, []httpmsg.Field{{Name: "X-Len", Value: strconv.Itoa(n)}})
				_, _ = fmt.Fprintf(w, "%d %d", n, sum)
				_ = w.End(tr)
			case "/stream":
				_ = w.WriteHeader(200, []httpmsg.Field{{Name: "Content-Type", Value: "text/event-stream"}})
				for i := range 5 {
					_, _ = fmt.Fprintf(w, "event %d\n", i)
					_ = w.Flush()
					testkit.Slow(10 * time.Millisecond) // a sleep: paces the stream's events so that each leaves in a frame of its own
				}
				_ = w.End([]httpmsg.Field{{Name: "X-Done", Value: "5"}})
			default:
				_ = w.WriteResponse(200, nil, []byte("hello "+r.Path))
			}
		},
	}
}

func clients() map[string]func() *http.Client {
	return map[string]func() *http.Client{"xnet": xnetClient, "std": stdClient}
}

func mustGet(t testing.TB, cl *http.Client, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := cl.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func TestClientGet(t *testing.T) {
	srv := startNetServer(t, appHandler(), nil)
	for name, mk := range clients() {
		t.Run(name, func(t *testing.T) {
			cl := mk()
			for _, p := range []string{"/inline", "/worker"} {
				resp, b := mustGet(t, cl, "http://"+srv.addr()+p)
				if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
					t.Fatalf("%s: %v %d", p, resp.Proto, resp.StatusCode)
				}
				if p == "/inline" && (string(b) != "inline ok" || resp.Header.Get("Content-Type") != "text/plain") {
					t.Fatalf("%q %v", b, resp.Header)
				}
				if resp.ContentLength != int64(len(b)) || resp.Header.Get("Date") == "" {
					t.Fatalf("%v", resp.Header)
				}
			}
		})
	}
}

func TestClientPostLarge(t *testing.T) {
	srv := startNetServer(t, appHandler(), &Config{MaxRequestBodySize: 32 << 20})
	body := make([]byte, 16<<20)
	sum := uint64(0)
	for i := range body {
		body[i] = byte(i * 7)
		sum += uint64(body[i])
	}
	for name, mk := range clients() {
		t.Run(name, func(t *testing.T) {
			resp, err := mk().Post("http://"+srv.addr()+"/echo", "application/octet-stream", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("%d %d", len(body), sum); string(b) != want {
				t.Fatalf("got %q want %q", b, want)
			}
		})
	}
}

func TestClientDownload64MiB(t *testing.T) {
	srv := startNetServer(t, appHandler(), nil)
	resp, err := xnetClient().Get("http://" + srv.addr() + "/big")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || n != 64<<20 {
		t.Fatalf("%d %v", n, err)
	}
}

// TestClientConcurrentOneConn is the HPACK regression: 100 goroutines x 10
// requests multiplexed on one connection.
func TestClientConcurrentOneConn(t *testing.T) {
	srv := startNetServer(t, appHandler(), nil)
	cl := xnetClient()
	var wg sync.WaitGroup
	var fails atomic.Int32
	for g := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				p := fmt.Sprintf("/g%d/r%d", g, i)
				if i%2 == 0 {
					p = "/inline"
				}
				req, _ := http.NewRequest("GET", "http://"+srv.addr()+p, nil)
				req.Header.Set("X-Goroutine", strconv.Itoa(g))
				req.Header.Set("X-Iter", strconv.Itoa(i))
				resp, err := cl.Do(req)
				if err != nil {
					t.Error(err)
					fails.Add(1)
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := "hello " + p
				if p == "/inline" {
					want = "inline ok"
				}
				if string(b) != want {
					t.Errorf("got %q want %q", b, want)
					fails.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	srv.mu.Lock()
	n := len(srv.conn)
	srv.mu.Unlock()
	if n != 1 || fails.Load() != 0 {
		t.Fatalf("%d connections, %d failures", n, fails.Load())
	}
}

// TestClientManyConnections runs 600 concurrent streams over 100 connections.
func TestClientManyConnections(t *testing.T) {
	srv := startNetServer(t, appHandler(), nil)
	var wg sync.WaitGroup
	var fails atomic.Int32
	for range 100 {
		cl := xnetClient()
		for s := range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := "/worker"
				if s%2 == 0 {
					p = "/inline"
				}
				resp, err := cl.Get("http://" + srv.addr() + p)
				if err != nil {
					fails.Add(1)
					t.Error(err)
					return
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != 200 {
					fails.Add(1)
					t.Error(err, resp.StatusCode)
				}
			}()
		}
	}
	wg.Wait()
	if fails.Load() != 0 {
		t.Fatalf("%d failures", fails.Load())
	}
}

func TestClientStreamingAndTrailers(t *testing.T) {
	srv := startNetServer(t, appHandler(), nil)
	for name, mk := range clients() {
		t.Run(name, func(t *testing.T) {
			cl := mk()
			resp, err := cl.Get("http://" + srv.addr() + "/stream")
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 100)
			n, err := io.ReadAtLeast(resp.Body, buf, len("event 0\n"))
			if err != nil || string(buf[:n]) != "event 0\n" {
				t.Fatalf("first event %q %v", buf[:n], err)
			}
			rest, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(rest) != "event 1\nevent 2\nevent 3\nevent 4\n" || resp.Trailer.Get("X-Done") != "5" {
				t.Fatalf("%q %v", rest, resp.Trailer)
			}
			// Request trailers echoed as response trailers.
			for _, p := range []string{"/echo", "/inline-echo"} {
				req, _ := http.NewRequest("POST", "http://"+srv.addr()+p, io.NopCloser(bytes.NewReader([]byte("xyz"))))
				req.ContentLength = -1
				req.Trailer = http.Header{"X-Check": {"ok"}}
				resp, err = cl.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if string(b) != fmt.Sprintf("3 %d", 'x'+'y'+'z') || resp.Trailer.Get("X-Echo-X-Check") != "ok" {
					t.Fatalf("%s: %q %v", p, b, resp.Trailer)
				}
			}
		})
	}
}

// TestClientSlowHandlerDoesNotBlock checks that a blocked handler does not delay
// another stream of the same connection.
func TestClientSlowHandlerDoesNotBlock(t *testing.T) {
	h := appHandler()
	slowIn := make(chan struct{})
	serve := h.serve
	h.serve = func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
		if r.Path == "/slow" {
			close(slowIn)
		}
		serve(r, w)
	}
	srv := startNetServer(t, h, nil)
	cl := xnetClient()
	mustGet(t, cl, "http://"+srv.addr()+"/warm") // one connection
	slowDone := make(chan time.Time, 1)
	go func() {
		mustGet(t, cl, "http://"+srv.addr()+"/slow")
		slowDone <- time.Now()
	}()
	select { // the slow request reaches its handler first
	case <-slowIn:
	case <-time.After(testkit.Timeout):
		t.Fatal("the slow request did not reach its handler")
	}
	start := time.Now()
	for range 5 {
		mustGet(t, cl, "http://"+srv.addr()+"/fast")
	}
	fastDone := time.Now()
	// /slow sleeps 500 ms: fast requests queued behind it on the shared
	// connection would end after it.
	if slow := <-slowDone; !slow.After(fastDone) {
		t.Fatalf("slow request finished first; fast requests took %v", fastDone.Sub(start))
	}
}
