package h2

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/summerwind/h2spec/config"
	"github.com/summerwind/h2spec/generic"
	h2spechpack "github.com/summerwind/h2spec/hpack"
	h2spechttp2 "github.com/summerwind/h2spec/http2"
	"github.com/summerwind/h2spec/spec"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// TestH2Spec runs every h2spec case (generic, http2, hpack; --strict) against the
// std-net test server, once with worker handlers and once inline.
func TestH2Spec(t *testing.T) {
	if testing.Short() {
		t.Skip("h2spec takes a few seconds")
	}
	for _, inline := range []bool{false, true} {
		t.Run(map[bool]string{true: "inline", false: "worker"}[inline], func(t *testing.T) {
			h := handlerFunc{
				inline: func(*httpmsg.Request) bool { return inline },
				serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
					_ = w.WriteResponse(200, []httpmsg.Field{{Name: "content-type", Value: "text/plain"}}, []byte("hello from celeris h2"))
				},
			}
			srv := startNetServer(t, h, nil)
			host, port, _ := net.SplitHostPort(srv.addr())
			p, _ := strconv.Atoi(port)
			cfg := &config.Config{
				Host:         host,
				Port:         p,
				Path:         "/",
				Timeout:      2 * time.Second,
				MaxHeaderLen: 4000,
				Strict:       true,
			}
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
			t.Logf("h2spec: %d passed, %d failed, %d skipped", passed, failed, skipped)
			if failed != 0 || skipped != 0 || passed == 0 {
				t.Errorf("h2spec output:\n%s", out)
			}
		})
	}
}

func reportFailures(t *testing.T, g *spec.TestGroup) {
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
