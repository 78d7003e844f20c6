package celeris

import (
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/summerwind/h2spec/config"
	"github.com/summerwind/h2spec/generic"
	h2spechpack "github.com/summerwind/h2spec/hpack"
	h2spechttp2 "github.com/summerwind/h2spec/http2"
	"github.com/summerwind/h2spec/spec"
)

// TestH2SpecTLS runs every h2spec case (--strict) over TLS (h2 by ALPN) against
// the std engine's TLS listener.
func TestH2SpecTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("h2spec takes a few seconds")
	}
	_, _, secure := startTLSServer(t, Config{}, func(s *Server) {
		s.Any("/", func(c *Context) error { return c.String(200, "hello from celeris") })
	})
	host, port, _ := net.SplitHostPort(secure)
	p, _ := strconv.Atoi(port)
	cfg := &config.Config{Host: host, Port: p, Path: "/", Timeout: 2 * time.Second, MaxHeaderLen: 4000, Strict: true, TLS: true, Insecure: true}
	groups := []*spec.TestGroup{generic.Spec(), h2spechttp2.Spec(), h2spechpack.Spec()}
	old := os.Stdout
	devnull, _ := os.Open(os.DevNull)
	os.Stdout = devnull
	for _, g := range groups {
		g.Test(cfg)
	}
	os.Stdout = old
	passed, failed := 0, 0
	var report func(g *spec.TestGroup)
	report = func(g *spec.TestGroup) {
		for _, tc := range append(append([]*spec.TestCase(nil), g.Tests...), g.StrictTests...) {
			if tc.Result != nil && tc.Result.Failed {
				t.Errorf("h2spec FAIL %s: %s: %v", g.ID(), tc.Desc, tc.Result.Error)
			}
		}
		for _, sg := range g.Groups {
			report(sg)
		}
	}
	for _, g := range groups {
		passed += g.PassedCount
		failed += g.FailedCount
		report(g)
	}
	t.Logf("h2spec --strict --tls: %d passed, %d failed", passed, failed)
	if passed != 146 || failed != 0 {
		t.Fatalf("h2spec --tls: %d passed, %d failed, want 146 passed", passed, failed)
	}
}
