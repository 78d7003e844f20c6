//go:build !race

package cors_test

import (
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/cors"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

// TestAllocs: a request without Origin, and a simple request with an allowed one,
// allocate nothing in the middleware.
func TestAllocs(t *testing.T) {
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/base", ok)
		s.GET("/default", ok, cors.Default())
		s.GET("/strict", ok, cors.New(cors.Config{
			AllowOrigins:     []string{"https://app.example.com"},
			AllowCredentials: true,
		}))
	})
	const n = 2000
	base := mwtest.AllocsPerRequest(t, addr, "GET /base HTTP/1.1\r\nHost: x\r\n\r\n", n)
	for _, tt := range []struct{ name, req string }{
		{name: "default, no Origin", req: "GET /default HTTP/1.1\r\nHost: x\r\n\r\n"},
		{name: "strict, no Origin", req: "GET /strict HTTP/1.1\r\nHost: x\r\n\r\n"},
		{name: "strict, allowed Origin", req: "GET /strict HTTP/1.1\r\nHost: x\r\nOrigin: https://app.example.com\r\n\r\n"},
	} {
		if a := mwtest.AllocsPerRequest(t, addr, tt.req, n); a-base > 0.1 {
			t.Errorf("%s: %.2f allocs per request over base %.2f", tt.name, a-base, base)
		}
	}
}
