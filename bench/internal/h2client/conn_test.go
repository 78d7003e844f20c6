package h2client

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// h2cServer starts a net/http server speaking prior-knowledge h2c.
func h2cServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: &p}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func testHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bench", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "OK") })
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		io.WriteString(w, strconv.FormatInt(n, 10))
	})
	mux.HandleFunc("GET /download", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("size"))
		io.WriteString(w, strings.Repeat("x", n))
	})
	mux.HandleFunc("GET /reset", func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) })
	return mux
}

func TestConcurrentRequests(t *testing.T) {
	addr := h2cServer(t, testHandler())
	c, err := Dial(addr, Options{Capture: true, StreamWindow: 65535, ConnWindow: 65535 * 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	big := make([]byte, 300000) // beyond the initial send windows: needs WINDOW_UPDATE
	cases := []struct {
		req  Request
		want string
		size int
	}{
		{req: Request{Method: "GET", Path: "/bench", Authority: addr}, want: "OK"},
		{req: Request{Method: "POST", Path: "/upload", Authority: addr, Body: big}, want: "300000"},
		{req: Request{Method: "GET", Path: "/download?size=500000", Authority: addr}, size: 500000},
	}
	var wg sync.WaitGroup
	for i := range 60 {
		tc := cases[i%len(cases)]
		wg.Go(func() {
			resp, err := c.Do(&tc.req)
			if err != nil {
				t.Errorf("%s: %v", tc.req.Path, err)
				return
			}
			if resp.Status != 200 {
				t.Errorf("%s: status %d", tc.req.Path, resp.Status)
			}
			if tc.want != "" && string(resp.Body) != tc.want {
				t.Errorf("%s: body %q, want %q", tc.req.Path, resp.Body, tc.want)
			}
			if tc.size != 0 && (resp.BodyLen != int64(tc.size) || len(resp.Body) != tc.size) {
				t.Errorf("%s: body length %d", tc.req.Path, resp.BodyLen)
			}
		})
	}
	wg.Wait()
}

func TestStreamReset(t *testing.T) {
	addr := h2cServer(t, testHandler())
	c, err := Dial(addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Do(&Request{Method: "GET", Path: "/reset", Authority: addr})
	var se *StreamError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v, want a StreamError", err)
	}
	// The connection survives a stream error.
	resp, err := c.Do(&Request{Method: "GET", Path: "/bench", Authority: addr})
	if err != nil || resp.Status != 200 {
		t.Fatalf("after reset: %v %+v", err, resp)
	}
}

func TestGoAwayFailsStreams(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		buf := make([]byte, 4096)
		nc.Read(buf) // preface and SETTINGS
		// SETTINGS (empty), then GOAWAY(last=0, PROTOCOL_ERROR).
		nc.Write([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0})
		time.Sleep(50 * time.Millisecond)
		nc.Write([]byte{0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
		time.Sleep(time.Second)
	}()
	c, err := Dial(ln.Addr().String(), Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.Do(&Request{Method: "GET", Path: "/", Authority: "x"})
	if !errors.Is(err, ErrGoAway) && !errors.Is(err, ErrConnClosed) {
		t.Fatalf("err = %v, want ErrGoAway", err)
	}
	if !errors.Is(c.Err(), ErrGoAway) {
		t.Fatalf("conn err = %v, want ErrGoAway", c.Err())
	}
}
