package compress_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/compress"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/recovery"
)

var text = strings.Repeat("celeris compresses text nicely. ", 100) // 3200 bytes

func gunzip(t testing.TB, b string) string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(b))
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return string(out)
}

func TestCompress(t *testing.T) {
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(recovery.New(recovery.Config{Logger: slog.New(slog.DiscardHandler)}), compress.Default())
		s.GET("/text", func(c *celeris.Context) error { return c.String(200, text) })
		s.GET("/small", func(c *celeris.Context) error { return c.JSON(200, map[string]string{"message": "hi"}) })
		s.GET("/png", func(c *celeris.Context) error { return c.Blob(200, "image/png", []byte(text)) })
		s.GET("/svg", func(c *celeris.Context) error { return c.Blob(200, "image/svg+xml", []byte(text)) })
		s.GET("/encoded", func(c *celeris.Context) error {
			c.SetHeader("Content-Encoding", "br")
			return c.Blob(200, "text/plain", []byte(text))
		})
		s.GET("/etag", func(c *celeris.Context) error {
			c.SetHeader("ETag", `"v1"`)
			c.SetHeader("Content-Length", "3200")
			return c.String(201, text)
		})
		s.GET("/nocontent", func(c *celeris.Context) error { return c.NoContent(204) })
		s.GET("/stream", func(c *celeris.Context) error {
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, text)
			return err
		})
		s.GET("/error", func(c *celeris.Context) error { return celeris.NewHTTPError(418, text) })
		s.GET("/panic", func(c *celeris.Context) error { panic("in compressed route") })
		s.GET("/tiny", func(c *celeris.Context) error { return c.JSON(200, map[string]string{"message": "Hello, World!"}) },
			compress.New(compress.Config{MinLength: -1, Level: 1}))
	})
	gz := mwtest.H("Accept-Encoding", "gzip")
	tests := []struct {
		name, path string
		header     http.Header
		status     int
		encoding   string
		body       string // decoded
		etag       string
	}{
		{name: "gzip", path: "/text", header: gz, status: 200, encoding: "gzip", body: text},
		{name: "q and spaces", path: "/text", header: mwtest.H("Accept-Encoding", "br;q=1, gzip ; q=0.5"), status: 200, encoding: "gzip", body: text},
		{name: "star", path: "/text", header: mwtest.H("Accept-Encoding", "*"), status: 200, encoding: "gzip", body: text},
		{name: "gzip q=0", path: "/text", header: mwtest.H("Accept-Encoding", "gzip;q=0, *"), status: 200, body: text},
		{name: "no Accept-Encoding", path: "/text", status: 200, body: text},
		{name: "identity only", path: "/text", header: mwtest.H("Accept-Encoding", "identity"), status: 200, body: text},
		{name: "below MinLength", path: "/small", header: gz, status: 200, body: `{"message":"hi"}`},
		{name: "MinLength -1", path: "/tiny", header: gz, status: 200, encoding: "gzip", body: `{"message":"Hello, World!"}`},
		{name: "image", path: "/png", header: gz, status: 200, body: text},
		{name: "svg", path: "/svg", header: gz, status: 200, encoding: "gzip", body: text},
		{name: "already encoded", path: "/encoded", header: gz, status: 200, encoding: "br", body: text},
		{name: "strong etag weakened", path: "/etag", header: gz, status: 201, encoding: "gzip", body: text, etag: `W/"v1"`},
		{name: "etag kept", path: "/etag", status: 201, body: text, etag: `"v1"`},
		{name: "204", path: "/nocontent", header: gz, status: 204},
		{name: "stream compressed", path: "/stream", header: gz, status: 200, encoding: "gzip", body: text},
		{name: "stream identity", path: "/stream", status: 200, body: text},
		{name: "error answer", path: "/error", header: gz, status: 418, body: text},
		{name: "panic recovered outside", path: "/panic", header: gz, status: 500, body: "Internal Server Error"},
	}
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, tt := range tests {
			resp, body := mwtest.Get(t, client, "http://"+addr+tt.path, tt.header)
			enc := resp.Header.Get("Content-Encoding")
			if enc == "gzip" {
				if tt.path != "/stream" && resp.ContentLength != int64(len(body)) {
					t.Errorf("%s: Content-Length %d for %d bytes", tt.name, resp.ContentLength, len(body))
				}
				body = gunzip(t, body)
			}
			if resp.StatusCode != tt.status || enc != tt.encoding || body != tt.body {
				t.Errorf("%s: %d %q body %d bytes (%.20q), want %d %q %d bytes",
					tt.name, resp.StatusCode, enc, len(body), body, tt.status, tt.encoding, len(tt.body))
			}
			if tt.path != "/error" && tt.path != "/panic" &&
				!strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Accept-Encoding") {
				t.Errorf("%s: Vary %q", tt.name, resp.Header.Values("Vary"))
			}
			if tt.etag != "" && resp.Header.Get("ETag") != tt.etag {
				t.Errorf("%s: ETag %q, want %q", tt.name, resp.Header.Get("ETag"), tt.etag)
			}
		}

		// HEAD reports the length GET sends.
		get, gbody := mwtest.Get(t, client, "http://"+addr+"/text", gz)
		head, hbody := mwtest.Do(t, client, "HEAD", "http://"+addr+"/text", gz, nil)
		if hbody != "" || head.Header.Get("Content-Encoding") != "gzip" || head.ContentLength != int64(len(gbody)) || get.ContentLength != int64(len(gbody)) {
			t.Errorf("HEAD: %v %q, GET length %d", head.Header, hbody, len(gbody))
		}
	})
}

// TestConcurrent checks that pooled writers and buffers never mix bodies.
func TestConcurrent(t *testing.T) {
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(compress.New(compress.Config{Level: 9}))
		s.GET("/n/:n", func(c *celeris.Context) error {
			return c.String(200, strings.Repeat(c.Param("n")+" ", 500))
		})
	})
	client := mwtest.Client(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				n := fmt.Sprint(g*1000 + i)
				resp, body := mwtest.Get(t, client, "http://"+addr+"/n/"+n, mwtest.H("Accept-Encoding", "gzip"))
				if resp.Header.Get("Content-Encoding") != "gzip" {
					t.Errorf("not compressed")
					return
				}
				if got := gunzip(t, body); got != strings.Repeat(n+" ", 500) {
					t.Errorf("body for %s: %.30q", n, got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		ae   string
		want bool
	}{
		{ae: "", want: false},
		{ae: "gzip", want: true},
		{ae: "GZIP", want: true},
		{ae: "x-gzip", want: true},
		{ae: "deflate, gzip", want: true},
		{ae: "gzip;q=0", want: false},
		{ae: "gzip;q=0.000", want: false},
		{ae: "gzip;q=0.001", want: true},
		{ae: "gzip; q=1.0", want: true},
		{ae: "gzip;q=bogus", want: false},
		{ae: "*", want: true},
		{ae: "*;q=0", want: false},
		{ae: "gzip;q=0, *", want: false},
		{ae: "*, gzip;q=0", want: false},
		{ae: "br, identity", want: false},
		{ae: "gzipx", want: false},
		{ae: " , ,gzip", want: true},
	}
	for _, tt := range tests {
		if got := compress.AcceptsGzip(tt.ae); got != tt.want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", tt.ae, got, tt.want)
		}
	}
}

func TestCompressible(t *testing.T) {
	for ct, want := range map[string]bool{
		"":                            true,
		"text/html; charset=utf-8":    true,
		"application/json":            true,
		"image/svg+xml":               true,
		"IMAGE/PNG":                   false,
		"video/mp4":                   false,
		"application/zip":             false,
		"application/gzip":            false,
		"font/woff2":                  false,
		"application/octet-stream":    false,
		"application/javascript":      true,
		" application/pdf; x=y":       false,
		"application/vnd.api+json":    true,
		"audio/mpeg":                  false,
		"application/x-7z-compressed": false,
	} {
		if got := compress.Compressible(ct); got != want {
			t.Errorf("Compressible(%q) = %v, want %v", ct, got, want)
		}
	}
}

func TestInvalidLevel(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for level 42")
		}
	}()
	compress.New(compress.Config{Level: 42})
}

func BenchmarkGzip(b *testing.B) {
	body := bytes.Repeat([]byte("benchmark body "), 200)
	_, addr := mwtest.Start(b, func(s *celeris.Server) {
		s.Use(compress.New(compress.Config{Level: 1}))
		s.GET("/", func(c *celeris.Context) error { return c.Blob(200, "text/plain", body) })
	})
	client := mwtest.Client(b)
	b.ReportAllocs()
	for b.Loop() {
		mwtest.Get(b, client, "http://"+addr+"/", mwtest.H("Accept-Encoding", "gzip"))
	}
}
