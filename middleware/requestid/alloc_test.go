//go:build !race

package requestid_test

import (
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/requestid"
)

// TestAllocs: keeping a valid incoming id allocates nothing beyond the Context
// store (one boxed string), which ContextKey "-" turns off.
func TestAllocs(t *testing.T) {
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.GET("/base", ok)
		s.GET("/nostore", ok, requestid.New(requestid.Config{ContextKey: "-"}))
		s.GET("/store", ok, requestid.Default())
	})
	req := func(path string) string {
		return "GET " + path + " HTTP/1.1\r\nHost: x\r\nX-Request-ID: 550e8400-e29b-41d4-a716-446655440000\r\n\r\n"
	}
	const n = 2000
	base := mwtest.AllocsPerRequest(t, addr, req("/base"), n)
	nostore := mwtest.AllocsPerRequest(t, addr, req("/nostore"), n)
	store := mwtest.AllocsPerRequest(t, addr, req("/store"), n)
	t.Logf("allocs per request: base %.2f, nostore %.2f, store %.2f", base, nostore, store)
	if nostore-base > 0.1 {
		t.Errorf("valid incoming id without store: %.2f allocs over base", nostore-base)
	}
	if store-base > 1.1 {
		t.Errorf("valid incoming id with store: %.2f allocs over base", store-base)
	}
}
