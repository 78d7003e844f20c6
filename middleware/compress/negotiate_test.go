package compress_test

import (
	"compress/flate"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/compress"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

// deflateEncoder is a second coding for the tests, from the standard library.
type deflateEncoder struct{ pool sync.Pool }

func (d *deflateEncoder) Coding() string { return "deflate" }

func (d *deflateEncoder) Acquire(dst io.Writer) compress.Writer {
	if w, _ := d.pool.Get().(*flate.Writer); w != nil {
		w.Reset(dst)
		return w
	}
	w, _ := flate.NewWriter(dst, flate.BestSpeed)
	return w
}

func (d *deflateEncoder) Release(w compress.Writer) { d.pool.Put(w) }

func inflate(t testing.TB, b string) string {
	t.Helper()
	out, err := io.ReadAll(flate.NewReader(strings.NewReader(b)))
	if err != nil {
		t.Fatalf("inflate: %v", err)
	}
	return string(out)
}

func TestQuality(t *testing.T) {
	tests := []struct {
		ae, coding string
		want       int
	}{
		{ae: "", coding: "gzip", want: 0},
		{ae: "gzip", coding: "gzip", want: 1000},
		{ae: "x-gzip;q=0.5", coding: "gzip", want: 500},
		{ae: "x-gzip", coding: "br", want: 0},
		{ae: "br;q=0.25, gzip", coding: "br", want: 250},
		{ae: "BR;Q=0.999", coding: "br", want: 999},
		{ae: "zstd;q=1.000", coding: "zstd", want: 1000},
		{ae: "zstd;q=1.001", coding: "zstd", want: 0},
		{ae: "zstd;q=0.0001", coding: "zstd", want: 0},
		{ae: "zstd;q=.5", coding: "zstd", want: 0},
		{ae: "zstd;q=", coding: "zstd", want: 0},
		{ae: "*;q=0.3", coding: "zstd", want: 300},
		{ae: "*;q=0.3, zstd;q=0", coding: "zstd", want: 0},
		{ae: "zstd;q=0, *", coding: "zstd", want: 0},
		{ae: "zstd ; foo=bar ; q=0.7", coding: "zstd", want: 700},
		{ae: "zstdx", coding: "zstd", want: 0},
	}
	for _, tt := range tests {
		if got := compress.Quality(tt.ae, tt.coding); got != tt.want {
			t.Errorf("Quality(%q, %q) = %d, want %d", tt.ae, tt.coding, got, tt.want)
		}
	}
}

// TestNegotiation: with gzip and deflate offered (deflate preferred), the coding
// with the highest q wins, the server's order breaks ties, q=0 refuses, and "*"
// stands for the codings not listed; over h1 and h2c.
func TestNegotiation(t *testing.T) {
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(compress.New(compress.Config{Encoders: []compress.Encoder{&deflateEncoder{}, compress.Gzip(1)}}))
		s.GET("/", func(c *celeris.Context) error { return c.String(200, text) })
	})
	tests := []struct{ ae, want string }{
		{ae: "gzip, deflate", want: "deflate"},
		{ae: "gzip, deflate;q=0.9", want: "gzip"},
		{ae: "gzip;q=0.1, deflate;q=0.2", want: "deflate"},
		{ae: "deflate;q=0, gzip;q=0.1", want: "gzip"},
		{ae: "deflate;q=0, *", want: "gzip"},
		{ae: "*", want: "deflate"},
		{ae: "gzip;q=0.5, *;q=0.6", want: "deflate"},
		{ae: "gzip, *;q=0", want: "gzip"},
		{ae: "gzip;q=0, deflate;q=0", want: ""},
		{ae: "br, zstd", want: ""},
		{ae: "identity", want: ""},
	}
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, tt := range tests {
			resp, body := mwtest.Get(t, client, "http://"+addr+"/", mwtest.H("Accept-Encoding", tt.ae))
			got := resp.Header.Get("Content-Encoding")
			switch got {
			case "gzip":
				body = gunzip(t, body)
			case "deflate":
				body = inflate(t, body)
			}
			if got != tt.want || body != text {
				t.Errorf("Accept-Encoding %q: %q (body %d bytes), want %q", tt.ae, got, len(body), tt.want)
			}
		}
	})
}

// TestRegister: Register puts Encoders ahead of gzip in the default list of the
// middleware New builds afterwards, and replaces one for the same coding.
func TestRegister(t *testing.T) {
	before := compress.Registered()
	t.Cleanup(func() { compress.SetRegistered(before) })
	d := &deflateEncoder{}
	compress.Register(&deflateEncoder{}, d)
	if r := compress.Registered(); len(r) != len(before)+1 || r[len(r)-1] != compress.Encoder(d) {
		t.Fatalf("Registered() = %v", r)
	}
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/", func(c *celeris.Context) error { return c.String(200, text) }, compress.Default())
	})
	resp, body := mwtest.Get(t, mwtest.Client(t), "http://"+addr+"/", mwtest.H("Accept-Encoding", "gzip, deflate"))
	if resp.Header.Get("Content-Encoding") != "deflate" || inflate(t, body) != text {
		t.Errorf("registered deflate not preferred: %v", resp.Header)
	}
}

func TestDuplicateCoding(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for two gzip Encoders")
		}
	}()
	compress.New(compress.Config{Encoders: []compress.Encoder{compress.Gzip(1), compress.Gzip(9)}})
}

// FuzzQuality: any Accept-Encoding value gives every coding a q-value from 0 to
// 1000, the same whatever the case of its ASCII letters, and a value listing
// the coding first with a valid q gives that q.
func FuzzQuality(f *testing.F) {
	for _, s := range []string{"gzip", "br;q=0.5, *;q=0", "zstd;q=1.000, gzip;q=0.001", "*", ";;,,q=", "x-gzip;Q=0.7"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ae string) {
		for _, coding := range []string{"gzip", "br", "zstd"} {
			q := compress.Quality(ae, coding)
			if q < 0 || q > 1000 {
				t.Fatalf("Quality(%q, %q) = %d", ae, coding, q)
			}
			if up := strings.ToUpper(ae); isASCII(ae) && compress.Quality(up, coding) != q {
				t.Fatalf("Quality(%q) = %d, of %q = %d", ae, q, up, compress.Quality(up, coding))
			}
			if got := compress.Quality(coding+";q=0.25,"+ae, coding); got != 250 {
				t.Fatalf("listed first with q=0.25 before %q: %d", ae, got)
			}
		}
	})
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
