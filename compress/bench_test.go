package compress_test

// Benchmarks behind the figures in docs/BENCHMARKS.md ("Compression"):
// the two pure-Go brotli encoders on the same bodies, and this middleware
// against Fiber v2's compress middleware over loopback sockets, the same Go
// client fetching the same bodies from both.
//
//	go test -run '^$' -bench . -benchtime 200x ./compress

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	abrotli "github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"
	fibercompress "github.com/gofiber/fiber/v2/middleware/compress"
	"github.com/klauspost/compress/zstd"
	brrr "github.com/molecule-man/go-brrr"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	mwcompress "github.com/celeris-dev/celeris/middleware/compress"
)

// benchBodies are the bodies measured: a JSON array of 60 records (about 6 KB)
// and the repository's docs/ARCHITECTURE.md (prose, about 60 KB).
func benchBodies(tb testing.TB) []struct {
	name, contentType string
	body              []byte
} {
	var js strings.Builder
	js.WriteString("[")
	for i := range 60 {
		if i > 0 {
			js.WriteString(",")
		}
		fmt.Fprintf(&js, `{"id":%d,"name":"user %d","email":"user%d@example.com","active":%v,"roles":["reader","writer"],"score":%d.%d}`,
			i, i, i, i%3 == 0, i*37%100, i%10)
	}
	js.WriteString("]")
	doc, err := os.ReadFile("../docs/ARCHITECTURE.md")
	if err != nil {
		tb.Skipf("no ../docs/ARCHITECTURE.md: %v", err)
	}
	return []struct {
		name, contentType string
		body              []byte
	}{
		{name: "json-6k", contentType: "application/json", body: []byte(js.String())},
		{name: "text-60k", contentType: "text/markdown; charset=utf-8", body: doc},
	}
}

// BenchmarkBrotliEncoders encodes each body whole with a reused Writer of each
// library at the same quality.
func BenchmarkBrotliEncoders(b *testing.B) {
	for _, bb := range benchBodies(b) {
		for _, q := range []int{4, 6} {
			b.Run(fmt.Sprintf("andybalholm/%s/q%d", bb.name, q), func(b *testing.B) {
				var out bytes.Buffer
				w := abrotli.NewWriterLevel(&out, q)
				b.SetBytes(int64(len(bb.body)))
				b.ReportAllocs()
				for b.Loop() {
					out.Reset()
					w.Reset(&out)
					_, _ = w.Write(bb.body)
					_ = w.Close()
				}
				b.ReportMetric(float64(len(bb.body))/float64(out.Len()), "ratio")
			})
			b.Run(fmt.Sprintf("go-brrr/%s/q%d", bb.name, q), func(b *testing.B) {
				var out bytes.Buffer
				w, _ := brrr.NewWriter(&out, q)
				b.SetBytes(int64(len(bb.body)))
				b.ReportAllocs()
				for b.Loop() {
					out.Reset()
					w.Reset(&out)
					_, _ = w.Write(bb.body)
					_ = w.Close()
				}
				b.ReportMetric(float64(len(bb.body))/float64(out.Len()), "ratio")
			})
		}
	}
}

// decode undoes a coding with a decoder other than the encoder measured.
func decode(tb testing.TB, coding string, b []byte) []byte {
	var r io.Reader
	switch coding {
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			tb.Fatal(err)
		}
		defer zr.Close()
		r = zr
	case "br":
		r = abrotli.NewReader(bytes.NewReader(b))
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			tb.Fatal(err)
		}
		r = zr
	default:
		return b
	}
	out, err := io.ReadAll(r)
	if err != nil {
		tb.Fatalf("%s: %v", coding, err)
	}
	return out
}

// BenchmarkVsFiber: requests per second (as MB/s of the uncompressed body) and
// ratio for each body and coding, Celeris with this module's Encoders (zstd 3,
// brotli 4, klauspost gzip 6) and Fiber v2.52.15's compress middleware at its default
// (brotli 4, gzip 6; it has no zstd), one Go HTTP/1.1 client, keep-alive.
func BenchmarkVsFiber(b *testing.B) {
	bodies := benchBodies(b)
	_, celerisAddr := celeristest.Serve(b, celeris.Config{}, func(s *celeris.Server) {
		s.Use(mwcompress.New(mwcompress.Config{Encoders: encoders()}))
		for _, bb := range bodies {
			s.GET("/"+bb.name, func(c *celeris.Context) error { return c.Blob(200, bb.contentType, bb.body) })
		}
	})
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Use(fibercompress.New())
	for _, bb := range bodies {
		app.Get("/"+bb.name, func(c *fiber.Ctx) error {
			c.Set("Content-Type", bb.contentType)
			return c.Send(bb.body)
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = app.Listener(ln) }()
	b.Cleanup(func() { _ = app.Shutdown() })

	tr := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 4}
	b.Cleanup(tr.CloseIdleConnections)
	cl := &http.Client{Transport: tr}
	fetch := func(url, coding string) []byte {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Accept-Encoding", coding)
		resp, err := cl.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != coding {
			b.Fatalf("%s %s: %d %q %v", url, coding, resp.StatusCode, resp.Header.Get("Content-Encoding"), err)
		}
		return out
	}
	for _, bb := range bodies {
		for _, srv := range []struct{ name, addr string }{{"celeris", celerisAddr}, {"fiber", ln.Addr().String()}} {
			for _, coding := range []string{"zstd", "br", "gzip"} {
				if srv.name == "fiber" && coding == "zstd" {
					continue
				}
				b.Run(srv.name+"/"+bb.name+"/"+coding, func(b *testing.B) {
					url := "http://" + srv.addr + "/" + bb.name
					first := fetch(url, coding)
					if got := decode(b, coding, first); !bytes.Equal(got, bb.body) {
						b.Fatalf("decoded %d bytes, want %d", len(got), len(bb.body))
					}
					b.SetBytes(int64(len(bb.body)))
					for b.Loop() {
						fetch(url, coding)
					}
					b.ReportMetric(float64(len(bb.body))/float64(len(first)), "ratio")
				})
			}
		}
	}
}
