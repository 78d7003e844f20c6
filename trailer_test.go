package celeris

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/internal/h2raw"
)

// trailerRoutes answer with trailers: native (streamed, complete, bodyless,
// inline) and through Adapt (declared with a Trailer field, and with
// http.TrailerPrefix keys, streamed or buffered). Forbidden trailers (RFC 9110
// §6.5.1) are set too, and must not arrive.
func trailerRoutes(s *Server) {
	s.GET("/native/stream", func(c *Context) error {
		c.SetTrailer("X-Early", "e")
		w, err := c.Stream(http.StatusOK, "text/plain")
		if err != nil {
			return err
		}
		_, _ = io.WriteString(w, "hello")
		_ = w.Flush()
		c.SetTrailer("X-Late", "l")
		c.SetTrailer("Content-Type", "forbidden")
		return nil
	})
	blob := func(c *Context) error {
		c.SetTrailer("X-Sum", "1")
		c.SetTrailer("x-sum", "42") // replaces
		c.AddTrailer("Content-Length", "99")
		return c.String(http.StatusOK, "body")
	}
	s.GET("/native/blob", blob)
	s.GET("/native/inline", blob).Inline()
	s.GET("/native/empty", func(c *Context) error {
		c.SetTrailer("X-Sum", "42")
		return c.NoContent(http.StatusOK)
	})
	s.GET("/adapt/declared", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-A")
		_, _ = io.WriteString(w, "body")
		w.Header().Set("X-A", "1")
		w.Header().Set(http.TrailerPrefix+"X-B", "2")
		w.Header().Set(http.TrailerPrefix+"Set-Cookie", "no=1")
	}))
	s.GET("/adapt/flushed", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/grpc")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // gRPC's trailers-only answer: head, then trailers
		w.Header().Set(http.TrailerPrefix+"Grpc-Status", "5")
	}))
}

var trailerWant = map[string]struct {
	body    string
	trailer map[string]string
}{
	"/native/stream":  {"hello", map[string]string{"X-Early": "e", "X-Late": "l"}},
	"/native/blob":    {"body", map[string]string{"X-Sum": "42"}},
	"/native/inline":  {"body", map[string]string{"X-Sum": "42"}},
	"/native/empty":   {"", map[string]string{"X-Sum": "42"}},
	"/adapt/declared": {"body", map[string]string{"X-A": "1", "X-B": "2"}},
	"/adapt/flushed":  {"", map[string]string{"Grpc-Status": "5"}},
}

// TestResponseTrailers: Go's clients see the trailers after the body, on every
// protocol, and nothing the RFC keeps out of trailers.
func TestResponseTrailers(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, trailerRoutes)
	forEachProto(t, func(t *testing.T, client *http.Client, proto string) {
		for path, want := range trailerWant {
			resp, err := client.Get("http://" + addr + path)
			if err != nil {
				t.Fatal(err)
			}
			wantProto(t, resp, proto)
			if body := bodyString(t, resp); body != want.body {
				t.Errorf("%s: body %q, want %q", path, body, want.body)
			}
			if len(resp.Trailer) != len(want.trailer) {
				t.Errorf("%s: trailers %v, want %v", path, resp.Trailer, want.trailer)
			}
			for k, v := range want.trailer {
				if got := resp.Trailer.Get(k); got != v {
					t.Errorf("%s: trailer %s = %q, want %q (all: %v)", path, k, got, v, resp.Trailer)
				}
			}
		}
	})
}

// TestH1TrailerWire: on HTTP/1.1 a response with trailers is chunked, announces
// them in a Trailer field and ends with a trailer section; HTTP/1.0 gets the body
// without them.
func TestH1TrailerWire(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, trailerRoutes)
	for _, tc := range []struct{ path, head, end string }{
		{"/native/stream", "Trailer: X-Early\r\n", "\r\n5\r\nhello\r\n0\r\nX-Early: e\r\nX-Late: l\r\n\r\n"},
		{"/native/blob", "Trailer: x-sum\r\n", "\r\n4\r\nbody\r\n0\r\nx-sum: 42\r\n\r\n"},
		{"/native/empty", "Trailer: X-Sum\r\n", "\r\n\r\n0\r\nX-Sum: 42\r\n\r\n"},
		{"/adapt/declared", "Trailer: X-A\r\n", "\r\n4\r\nbody\r\n0\r\nX-B: 2\r\nX-A: 1\r\n\r\n"},
	} {
		rc := dialRaw(t, addr)
		rc.send("GET " + tc.path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		raw, err := io.ReadAll(rc.br)
		if err != nil {
			t.Fatal(err)
		}
		got := string(raw)
		head, _, _ := strings.Cut(got, "\r\n\r\n")
		if !strings.Contains(head, "Transfer-Encoding: chunked\r\n") || strings.Contains(head, "Content-Length") ||
			!strings.Contains(got, tc.head) || !strings.HasSuffix(got, tc.end) {
			t.Errorf("%s: got\n%q\nwant %q in the head and the end %q", tc.path, got, tc.head, tc.end)
		}

		rc = dialRaw(t, addr)
		rc.send("GET " + tc.path + " HTTP/1.0\r\nHost: x\r\n\r\n")
		raw, err = io.ReadAll(rc.br)
		if err != nil {
			t.Fatal(err)
		}
		got = string(raw)
		if _, body, _ := strings.Cut(got, "\r\n\r\n"); body != trailerWant[tc.path].body {
			t.Errorf("%s over HTTP/1.0: got\n%q", tc.path, got)
		}
	}
}

// TestH2TrailerFrames: on HTTP/2 the trailers are a last HEADERS frame with
// END_STREAM, after the DATA, or right after the response HEADERS when there is
// no body.
func TestH2TrailerFrames(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, trailerRoutes)
	for _, tc := range []struct {
		path  string
		types string
		trl   map[string]string
	}{
		{"/native/stream", "HEADERS DATA HEADERS", map[string]string{"x-early": "e", "x-late": "l"}},
		{"/native/blob", "HEADERS DATA HEADERS", map[string]string{"x-sum": "42"}},
		{"/native/inline", "HEADERS DATA HEADERS", map[string]string{"x-sum": "42"}},
		{"/native/empty", "HEADERS HEADERS", map[string]string{"x-sum": "42"}},
		{"/adapt/flushed", "HEADERS HEADERS", map[string]string{"grpc-status": "5"}},
	} {
		frames, err := h2raw.Do(addr, "GET", tc.path, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		var types []string
		for _, f := range frames {
			if f.Type == "DATA" && len(f.Data) == 0 && !f.EndStream {
				continue
			}
			types = append(types, f.Type)
		}
		if got := strings.Join(types, " "); got != tc.types {
			t.Errorf("%s: frames %s, want %s", tc.path, got, tc.types)
			continue
		}
		first, last := frames[0], frames[len(frames)-1]
		if first.EndStream || first.Field(":status") != "200" {
			t.Errorf("%s: first HEADERS %v end=%v", tc.path, first.Fields, first.EndStream)
		}
		if !last.EndStream || len(last.Fields) != len(tc.trl) {
			t.Errorf("%s: trailers %v end=%v, want %v", tc.path, last.Fields, last.EndStream, tc.trl)
		}
		for k, v := range tc.trl {
			if last.Field(k) != v {
				t.Errorf("%s: trailer %s = %q, want %q", tc.path, k, last.Field(k), v)
			}
		}
	}
}

// TestAdaptRequestTrailerDeclared: an adapted handler sees the request's declared
// trailer keys in r.Trailer before reading the body, their values after io.EOF,
// and no Trailer field in r.Header, as net/http documents.
func TestAdaptRequestTrailerDeclared(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.POST("/t", AdaptFunc(func(w http.ResponseWriter, r *http.Request) {
			_, declared := r.Trailer["X-Checksum"]
			before := r.Trailer.Get("X-Checksum")
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s|%v|%q|%s|%q", b, declared, before, r.Trailer.Get("X-Checksum"), r.Header.Get("Trailer"))
		}))
	})
	forEachProto(t, func(t *testing.T, client *http.Client, proto string) {
		req, _ := http.NewRequest("POST", "http://"+addr+"/t", io.NopCloser(strings.NewReader("hello")))
		req.ContentLength = -1
		req.Trailer = http.Header{"X-Checksum": {"abc"}} // sent after the body
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if body := bodyString(t, resp); body != `hello|true|""|abc|""` {
			t.Errorf("got %q", body)
		}
	})
}
