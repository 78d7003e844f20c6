// Package conformance runs conformance suites against a real Celeris server. It is
// a module of its own so that the core module's users never download the tools
// (h2spec and its dependencies); .ci/run runs it on every submission.
package conformance

import (
	"crypto/tls"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/summerwind/h2spec/config"
	"github.com/summerwind/h2spec/generic"
	h2spechpack "github.com/summerwind/h2spec/hpack"
	h2spechttp2 "github.com/summerwind/h2spec/http2"
	"github.com/summerwind/h2spec/spec"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/selfcert"
)

// h2specCases is the number of cases h2spec v2.2.1 runs with --strict.
const h2specCases = 146

// TestH2Spec runs every h2spec case (generic, http2, hpack; --strict) against the
// server: over h2c on the epoll and gnet engines (the route's handler on a
// worker, and inline on the loop) and on the std engine, and over TLS (h2 by ALPN, the std engine's
// TLS listener; h2spec --tls --insecure).
func TestH2Spec(t *testing.T) {
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		engine celeris.Engine
		inline bool
		tls    bool
	}{
		{name: "epoll-worker", engine: celeris.EngineEpoll},
		{name: "epoll-inline", engine: celeris.EngineEpoll, inline: true},
		{name: "gnet-worker", engine: celeris.EngineGnet},
		{name: "gnet-inline", engine: celeris.EngineGnet, inline: true},
		{name: "std-worker", engine: celeris.EngineStd},
		{name: "std-inline", engine: celeris.EngineStd, inline: true},
		{name: "tls-worker", tls: true},
		{name: "tls-inline", tls: true, inline: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.engine == celeris.EngineEpoll && runtime.GOOS != "linux" {
				t.Skip("the epoll engine is Linux's")
			}
			cfg := celeris.Config{Engine: tc.engine}
			if tc.tls {
				cfg.TLSAddr = "127.0.0.1:0"
				cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
			}
			s, addr := celeristest.Serve(t, cfg, func(s *celeris.Server) {
				r := s.Any("/", func(c *celeris.Context) error { return c.String(200, "hello from celeris") })
				if tc.inline {
					r.Inline()
				}
			})
			if tc.tls {
				addr = s.TLSAddr().String()
			}
			host, port, _ := net.SplitHostPort(addr)
			p, _ := strconv.Atoi(port)
			runH2Spec(t, &config.Config{Host: host, Port: p, Path: "/", Timeout: 2 * time.Second, MaxHeaderLen: 4000, Strict: true, TLS: tc.tls, Insecure: tc.tls})
		})
	}
}

// runH2Spec runs the three groups with cfg and fails t unless all cases pass.
func runH2Spec(t *testing.T, cfg *config.Config) {
	t.Helper()
	groups := []*spec.TestGroup{generic.Spec(), h2spechttp2.Spec(), h2spechpack.Spec()}
	out := runQuiet(t, func() {
		for _, g := range groups {
			g.Test(cfg)
		}
	})
	passed, failed, skipped := 0, 0, 0
	for _, g := range groups {
		passed += g.PassedCount
		failed += g.FailedCount
		skipped += g.SkippedCount
		reportFailures(t, g)
	}
	t.Logf("h2spec --strict: %d passed, %d failed, %d skipped", passed, failed, skipped)
	if passed != h2specCases || failed != 0 || skipped != 0 {
		t.Errorf("h2spec: %d passed, %d failed, %d skipped, want %d passed; output:\n%s", passed, failed, skipped, h2specCases, out)
	}
}

func reportFailures(t *testing.T, g *spec.TestGroup) {
	t.Helper()
	for _, tc := range append(append([]*spec.TestCase(nil), g.Tests...), g.StrictTests...) {
		if tc.Result != nil && tc.Result.Failed {
			t.Errorf("FAIL %s: %s: %v", g.ID(), tc.Desc, tc.Result.Error)
		}
	}
	for _, sg := range g.Groups {
		reportFailures(t, sg)
	}
}

// runQuiet runs fn with os.Stdout sent to a file (h2spec prints every case) and
// returns what it printed.
func runQuiet(t *testing.T, fn func()) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "h2spec")
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = f
	defer func() { os.Stdout = old }()
	fn()
	b, _ := os.ReadFile(f.Name())
	_ = f.Close()
	return strings.ReplaceAll(string(b), "\r", "\n")
}
