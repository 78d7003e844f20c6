//go:build !race

package compress_test

import (
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	mwcompress "github.com/celeris-dev/celeris/middleware/compress"
)

// TestEncodeAllocs: in steady state an answer encoded with zstd, brotli or gzip
// allocates no more than one not encoded (pooled writers and buffers, zstd's
// EncodeAll); measured through celeristest.Do, whose recorder allocates per
// header field: the answer not encoded carries one more field, as the encoded
// one carries Content-Encoding.
func TestEncodeAllocs(t *testing.T) {
	s := celeris.New(celeris.Config{})
	s.GET("/text", func(c *celeris.Context) error {
		if c.Header("Accept-Encoding") == "" {
			c.SetHeader("X-Identity", "1")
		}
		return c.String(200, text)
	}, mwcompress.New(mwcompress.Config{Encoders: encoders()}))
	per := func(ae string) float64 {
		req := celeristest.NewRequest("GET", "/text", nil)
		if ae != "" {
			req = req.WithHeader("Accept-Encoding", ae)
		}
		for range 50 { // fill the pools
			celeristest.Do(s, req)
		}
		return testing.AllocsPerRun(300, func() { celeristest.Do(s, req) })
	}
	base := per("")
	for _, coding := range []string{"zstd", "br", "gzip"} {
		if got := per(coding); got-base > 0.5 {
			t.Errorf("%s: %.2f allocations per answer, %.2f without encoding", coding, got, base)
		} else {
			t.Logf("%s: %.2f allocations per answer, %.2f without encoding", coding, got, base)
		}
	}
}
