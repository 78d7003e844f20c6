package celeris

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// duplexRoutes echo each piece of the request body as it arrives, while the
// client still sends: natively and through Adapt (with EnableFullDuplex).
func duplexRoutes(s *Server) {
	s.POST("/echo", func(c *Context) error {
		w, err := c.Stream(http.StatusOK, "application/octet-stream")
		if err != nil {
			return err
		}
		if err := w.Flush(); err != nil { // the head leaves now, before any body
			return err
		}
		r := c.BodyReader()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return werr
				}
				if werr := w.Flush(); werr != nil {
					return werr
				}
			}
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
		}
	})
	s.POST("/adapt/echo", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if err := rc.EnableFullDuplex(); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
		_ = rc.Flush()
		buf := make([]byte, 32<<10)
		for {
			n, err := r.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				if werr := rc.Flush(); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}))
}

// TestH2FullDuplex: over h2c (x/net's transport and net/http's) the handler
// echoes each message while the request body is still open; then 8 MiB go both
// ways at once, filling both flow-control windows, without a deadlock.
func TestH2FullDuplex(t *testing.T) {
	t.Parallel()
	// A stream of messages may exceed the default body limit (4 MiB).
	_, addr := startServer(t, Config{MaxRequestBodySize: 64 << 20}, duplexRoutes)
	for _, client := range []struct {
		name string
		c    *http.Client
	}{{"xnet", xnetH2cClient()}, {"nethttp", h2cClient()}} {
		for _, path := range []string{"/echo", "/adapt/echo"} {
			t.Run(client.name+path, func(t *testing.T) {
				defer client.c.CloseIdleConnections()
				pr, pw := io.Pipe()
				defer pw.Close()
				req, _ := http.NewRequest("POST", "http://"+addr+path, pr)
				resp, err := client.c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if resp.StatusCode != 200 || resp.ProtoMajor != 2 {
					t.Fatalf("%s %d", resp.Proto, resp.StatusCode)
				}
				for i := range 5 {
					msg := fmt.Sprintf("ping %d\n", i)
					if _, err := io.WriteString(pw, msg); err != nil {
						t.Fatal(err)
					}
					got := make([]byte, len(msg))
					if _, err := io.ReadFull(resp.Body, got); err != nil || string(got) != msg {
						t.Fatalf("echo %d: %q %v", i, got, err)
					}
				}
				const size = 8 << 20
				go func() {
					chunk := bytes.Repeat([]byte("0123456789abcdef"), 4<<10)
					for sent := 0; sent < size; sent += len(chunk) {
						if _, err := pw.Write(chunk); err != nil {
							return
						}
					}
					pw.Close()
				}()
				n, err := io.Copy(io.Discard, resp.Body)
				if err != nil || n != size {
					t.Fatalf("bulk echo: %d bytes, %v", n, err)
				}
			})
		}
	}
}

// TestH1FullDuplex: on HTTP/1.1 a handler keeps reading a chunked body after its
// response started (EnableFullDuplex through Adapt succeeds): each chunk comes
// back before the next is sent.
func TestH1FullDuplex(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, duplexRoutes)
	for _, path := range []string{"/echo", "/adapt/echo"} {
		rc := dialRaw(t, addr)
		rc.send("POST " + path + " HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
		resp, err := http.ReadResponse(rc.br, &http.Request{Method: "POST"})
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if resp.StatusCode != 200 {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("%s: %d %q", path, resp.StatusCode, b)
		}
		for i := range 5 {
			msg := fmt.Sprintf("ping %d\n", i)
			rc.send(fmt.Sprintf("%x\r\n%s\r\n", len(msg), msg))
			got := make([]byte, len(msg))
			if _, err := io.ReadFull(resp.Body, got); err != nil || string(got) != msg {
				t.Fatalf("%s: echo %d: %q %v", path, i, got, err)
			}
		}
		rc.send("0\r\n\r\n")
		if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
			t.Fatalf("%s: end: %q %v", path, rest, err)
		}
	}
}

// h2Stream opens a prior-knowledge h2c connection and starts stream 1 with a
// request head that leaves the stream open (a body follows).
func h2Stream(t *testing.T, addr, method, path string, endStream bool) (*http2.Framer, net.Conn) {
	t.Helper()
	p := dialH2(t, addr)
	p.request(1, method, path, endStream)
	return p.fr, p.nc
}

// TestH2ResetUnblocksHandler: a client resetting its stream cancels the handler's
// context and ends its blocked Read or Write with an error, natively and through
// Adapt.
func TestH2ResetUnblocksHandler(t *testing.T) {
	t.Parallel()
	type result struct {
		err      error
		canceled bool
	}
	results := make(chan result, 1)
	started := make(chan struct{}, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.POST("/read", func(c *Context) error {
			buf := make([]byte, 16)
			r := c.BodyReader()
			_, _ = io.ReadFull(r, buf[:3])
			started <- struct{}{}
			_, err := r.Read(buf)
			results <- result{err, waitDone(c.Context().Done())}
			return nil
		})
		s.GET("/write", func(c *Context) error {
			w, _ := c.Stream(http.StatusOK, "")
			chunk := make([]byte, 64<<10)
			started <- struct{}{}
			var err error
			for i := 0; i < 1000 && err == nil; i++ { // 64 MiB at most; the windows stop it long before
				_, err = w.Write(chunk)
			}
			results <- result{err, waitDone(c.Context().Done())}
			return nil
		})
		s.POST("/adapt/read", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			buf := make([]byte, 16)
			_, _ = io.ReadFull(r.Body, buf[:3])
			started <- struct{}{}
			_, err := r.Body.Read(buf)
			results <- result{err, waitDone(r.Context().Done())}
		}))
		s.GET("/adapt/write", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			chunk := make([]byte, 64<<10)
			started <- struct{}{}
			var err error
			for i := 0; i < 1000 && err == nil; i++ {
				_, err = w.Write(chunk)
			}
			results <- result{err, waitDone(r.Context().Done())}
		}))
	})
	for _, path := range []string{"/read", "/write", "/adapt/read", "/adapt/write"} {
		method := "GET"
		if strings.HasSuffix(path, "read") {
			method = "POST"
		}
		fr, _ := h2Stream(t, addr, method, path, method == "GET")
		if method == "POST" {
			if err := fr.WriteData(1, false, []byte("abc")); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: handler did not start", path)
		}
		// The handler is parked in its Read or Write, waiting for the client.
		testkit.Wait(t, path+"'s handler blocked", testkit.Parked("TestH2ResetUnblocksHandler"))
		select {
		case r := <-results:
			t.Fatalf("%s: handler did not block: %v", path, r.err)
		default:
		}
		if err := fr.WriteRSTStream(1, http2.ErrCodeCancel); err != nil {
			t.Fatal(err)
		}
		select {
		case r := <-results:
			if r.err == nil || !r.canceled {
				t.Errorf("%s: after RST_STREAM: err %v, context cancelled %v", path, r.err, r.canceled)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: handler still blocked after RST_STREAM", path)
		}
	}
}

func waitDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	case <-time.After(5 * time.Second):
		return false
	}
}

// TestAdaptBodyCloseUnblocksRead: Body.Close ends a Read blocked on another
// goroutine (gRPC's server reads the body from a goroutine of its own and waits
// for it after closing the body), on both protocols.
func TestAdaptBodyCloseUnblocksRead(t *testing.T) {
	t.Parallel()
	readErr := make(chan error, 1)
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.POST("/", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			got := make(chan error, 1)
			var first atomic.Bool
			go func() {
				buf := make([]byte, 16)
				_, _ = io.ReadFull(r.Body, buf[:3])
				first.Store(true)
				_, err := r.Body.Read(buf) // blocks: the client sends nothing more
				got <- err
			}()
			// the body reader blocks in its second Read before the handler answers
			parked := testkit.Parked("TestAdaptBodyCloseUnblocksRead", ").Read(")
			testkit.Until(testkit.Timeout, func() bool { return first.Load() && parked() })
			_, _ = io.WriteString(w, "ok")
			w.(http.Flusher).Flush()
			_ = r.Body.Close()
			select {
			case err := <-got:
				readErr <- err
			case <-time.After(5 * time.Second):
				readErr <- errors.New("Read still blocked after Body.Close")
			}
		}))
	})
	check := func(proto string) {
		t.Helper()
		select {
		case err := <-readErr:
			if err == nil || err == io.EOF || strings.Contains(err.Error(), "still blocked") {
				t.Errorf("%s: Read after Close: %v", proto, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: handler stuck", proto)
		}
	}
	rc := dialRaw(t, addr)
	rc.send("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")
	check("h1")

	fr, _ := h2Stream(t, addr, "POST", "/", false)
	if err := fr.WriteData(1, false, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	check("h2")
}
