//go:build !race

package compress_test

import (
	"strings"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/compress"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

// TestAllocs: a request that does not accept gzip allocates nothing in the
// middleware, and a gzipped one reuses pooled writers and buffers.
func TestAllocs(t *testing.T) {
	body := strings.Repeat("some text to compress ", 100)
	ok := func(c *celeris.Context) error { return c.String(200, body) }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/base", ok)
		s.GET("/gz", ok, compress.Default())
	})
	const n = 2000
	base := mwtest.AllocsPerRequest(t, addr, "GET /base HTTP/1.1\r\nHost: x\r\n\r\n", n)
	plain := mwtest.AllocsPerRequest(t, addr, "GET /gz HTTP/1.1\r\nHost: x\r\n\r\n", n)
	gz := mwtest.AllocsPerRequest(t, addr, "GET /gz HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n", n)
	t.Logf("allocs per request: base %.2f, identity %.2f, gzip %.2f", base, plain, gz)
	if plain-base > 0.1 {
		t.Errorf("identity path: %.2f allocs over base", plain-base)
	}
	if gz-base > 0.5 {
		t.Errorf("gzip path: %.2f allocs over base", gz-base)
	}
}
