//go:build !race

package secure_test

import (
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/secure"
)

// TestAllocs: the headers of a policy without nonce cost no allocation.
func TestAllocs(t *testing.T) {
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/base", ok)
		s.GET("/secure", ok, secure.New(secure.Config{ContentSecurityPolicy: "default-src 'self'"}))
	})
	const n = 2000
	base := mwtest.AllocsPerRequest(t, addr, "GET /base HTTP/1.1\r\nHost: x\r\n\r\n", n)
	withHeaders := mwtest.AllocsPerRequest(t, addr, "GET /secure HTTP/1.1\r\nHost: x\r\n\r\n", n)
	if withHeaders-base > 0.1 {
		t.Errorf("%.2f allocs per request over base %.2f", withHeaders-base, base)
	}
}
