//go:build !race

package csrf_test

import (
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/csrf"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

// TestAllocs: the header check of a same-origin POST costs no allocation.
func TestAllocs(t *testing.T) {
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.POST("/base", ok)
		s.POST("/csrf", ok, csrf.New(csrf.Config{TrustedOrigins: []string{"https://a.example"}}))
	})
	const n = 2000
	req := func(path string) string {
		return "POST " + path + " HTTP/1.1\r\nHost: x\r\nSec-Fetch-Site: same-origin\r\nOrigin: http://x\r\nContent-Length: 0\r\n\r\n"
	}
	base := mwtest.AllocsPerRequest(t, addr, req("/base"), n)
	checked := mwtest.AllocsPerRequest(t, addr, req("/csrf"), n)
	if checked-base > 0.1 {
		t.Errorf("%.2f allocs per request over base %.2f", checked-base, base)
	}
}
