package celeris

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"strings"
	"sync"
	"testing"

	"github.com/celeris-dev/celeris/internal/h2raw"
)

// earlyRoutes send two 103 Early Hints before the final response: native (worker
// and inline) and through Adapt (WriteHeader(103) with the header's fields).
func earlyRoutes(t *testing.T) func(s *Server) {
	native := func(c *Context) error {
		if err := c.WriteInformational(http.StatusEarlyHints, http.Header{"Link": {"</a.css>; rel=preload"}}); err != nil {
			return err
		}
		if err := c.WriteInformational(http.StatusEarlyHints, http.Header{"Link": {"</b.js>; rel=preload"}}); err != nil {
			return err
		}
		if err := c.WriteInformational(http.StatusSwitchingProtocols, nil); !errors.Is(err, ErrInformationalStatus) {
			t.Errorf("WriteInformational(101) = %v", err)
		}
		if err := c.WriteInformational(http.StatusOK, nil); !errors.Is(err, ErrInformationalStatus) {
			t.Errorf("WriteInformational(200) = %v", err)
		}
		if err := c.String(http.StatusOK, "final"); err != nil {
			return err
		}
		if err := c.WriteInformational(http.StatusEarlyHints, nil); !errors.Is(err, ErrResponseWritten) {
			t.Errorf("WriteInformational after the response = %v", err)
		}
		return nil
	}
	return func(s *Server) {
		s.GET("/native", native)
		s.GET("/inline", native).Inline()
		s.GET("/adapt", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", "</a.css>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Set("Link", "</b.js>; rel=preload")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			_, _ = io.WriteString(w, "final")
		}))
	}
}

// TestEarlyHints: Go's clients see both 103 responses (httptrace's
// Got1xxResponse) and then the final one, on every protocol.
func TestEarlyHints(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, earlyRoutes(t))
	forEachProto(t, func(t *testing.T, client *http.Client, proto string) {
		for _, path := range []string{"/native", "/inline", "/adapt"} {
			var mu sync.Mutex
			var got []string
			trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				mu.Lock()
				got = append(got, http.StatusText(code)+" "+h.Get("Link"))
				mu.Unlock()
				return nil
			}}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", "http://"+addr+path, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			wantProto(t, resp, proto)
			if body := bodyString(t, resp); resp.StatusCode != 200 || body != "final" {
				t.Errorf("%s: %d %q", path, resp.StatusCode, body)
			}
			mu.Lock()
			if g := strings.Join(got, ","); g != "Early Hints </a.css>; rel=preload,Early Hints </b.js>; rel=preload" {
				t.Errorf("%s: 1xx seen: %q", path, g)
			}
			if resp.Header.Get("Link") != "" {
				t.Errorf("%s: the final response has Link %q", path, resp.Header.Get("Link"))
			}
			mu.Unlock()
		}
	})
}

// TestH1EarlyHintsWire: the interim responses precede the final one on the wire;
// an HTTP/1.0 client gets none (RFC 9110 §15.2).
func TestH1EarlyHintsWire(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, earlyRoutes(t))
	for _, path := range []string{"/native", "/inline", "/adapt"} {
		rc := dialRaw(t, addr)
		rc.send("GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		raw, err := io.ReadAll(rc.br)
		if err != nil {
			t.Fatal(err)
		}
		want := "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" +
			"HTTP/1.1 103 Early Hints\r\nLink: </b.js>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\n"
		if got := string(raw); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "\r\n\r\nfinal") {
			t.Errorf("%s: got\n%q", path, got)
		}

		rc = dialRaw(t, addr)
		rc.send("GET " + path + " HTTP/1.0\r\nHost: x\r\n\r\n")
		raw, err = io.ReadAll(rc.br)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(raw); !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || strings.Contains(got, "103") {
			t.Errorf("%s over HTTP/1.0: got\n%q", path, got)
		}
	}
}

// TestH2EarlyHintsFrames: each interim response is a HEADERS frame without
// END_STREAM before the final HEADERS.
func TestH2EarlyHintsFrames(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, earlyRoutes(t))
	for _, path := range []string{"/native", "/inline", "/adapt"} {
		frames, err := h2raw.Do(addr, "GET", path, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(frames) < 4 {
			t.Fatalf("%s: %d frames: %+v", path, len(frames), frames)
		}
		for i, link := range []string{"</a.css>; rel=preload", "</b.js>; rel=preload"} {
			f := frames[i]
			if f.Type != "HEADERS" || f.EndStream || f.Field(":status") != "103" || f.Field("link") != link {
				t.Errorf("%s: frame %d: %s end=%v %v", path, i, f.Type, f.EndStream, f.Fields)
			}
		}
		if f := frames[2]; f.Type != "HEADERS" || f.Field(":status") != "200" {
			t.Errorf("%s: final: %s %v", path, f.Type, f.Fields)
		}
	}
}

// TestNetHTTPEarlyHints: a Celeris handler served by net/http (Server as an
// http.Handler) sends its 103 through net/http's writer.
func TestNetHTTPEarlyHints(t *testing.T) {
	s := New(Config{})
	s.GET("/", func(c *Context) error {
		c.SetHeader("X-Final", "1")
		if err := c.WriteInformational(http.StatusEarlyHints, http.Header{"Link": {"</a.css>; rel=preload"}}); err != nil {
			return err
		}
		return c.String(http.StatusOK, "final")
	})
	ts := httptest.NewServer(s)
	defer ts.Close()
	var got []string
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		got = append(got, fmt.Sprint(code, " ", h.Get("Link"), " ", h.Get("X-Final")))
		return nil
	}}
	req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", ts.URL, nil)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := bodyString(t, resp); body != "final" || resp.Header.Get("X-Final") != "1" || resp.Header.Get("Link") != "" {
		t.Errorf("final: %q %v", body, resp.Header)
	}
	if g := strings.Join(got, ","); g != "103 </a.css>; rel=preload " {
		t.Errorf("1xx seen: %q", g)
	}
}
