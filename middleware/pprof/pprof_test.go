package pprof_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/pprof"
)

func TestRegister(t *testing.T) {
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		pprof.Register(s.Group("/debug/pprof"))
	})
	client := mwtest.Client(t)
	base := "http://" + addr
	tests := []struct {
		method, path string
		status       int
		contains     string
	}{
		{method: "GET", path: "/debug/pprof/", status: 200, contains: "heap?debug=1"},
		{method: "GET", path: "/debug/pprof", status: http.StatusMovedPermanently},
		{method: "GET", path: "/debug/pprof/heap?debug=1", status: 200, contains: "heap profile"},
		{method: "GET", path: "/debug/pprof/goroutine?debug=2", status: 200, contains: "goroutine"},
		{method: "GET", path: "/debug/pprof/allocs", status: 200},
		{method: "GET", path: "/debug/pprof/cmdline", status: 200, contains: "pprof.test"},
		{method: "GET", path: "/debug/pprof/profile?seconds=1", status: 200},
		{method: "GET", path: "/debug/pprof/trace?seconds=0.2", status: 200},
		{method: "GET", path: "/debug/pprof/symbol", status: 200, contains: "num_symbols"},
		{method: "POST", path: "/debug/pprof/symbol", status: 200, contains: "num_symbols"},
		{method: "GET", path: "/debug/pprof/nosuch", status: 404, contains: "Unknown profile"},
	}
	for _, tt := range tests {
		t.Run(tt.method+tt.path, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, base+tt.path, nil)
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.200s", resp.StatusCode, tt.status, b)
			}
			if !strings.Contains(string(b), tt.contains) {
				t.Errorf("body does not contain %q: %.200s", tt.contains, b)
			}
			if tt.status == http.StatusMovedPermanently && resp.Header.Get("Location") != "/debug/pprof/" {
				t.Errorf("Location %q", resp.Header.Get("Location"))
			}
		})
	}
}

// Any prefix works, and the group's middleware guards the handlers.
func TestRegisterCustomPrefix(t *testing.T) {
	auth := func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if c.Header("X-Admin") != "yes" {
				return celeris.NewHTTPError(http.StatusForbidden, "admins only")
			}
			return next(c)
		}
	}
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		pprof.Register(s.Group("/admin/prof", auth))
	})
	client := mwtest.Client(t)
	for _, tc := range []struct {
		admin  bool
		path   string
		status int
	}{
		{admin: false, path: "/admin/prof/", status: 403},
		{admin: true, path: "/admin/prof/", status: 200},
		{admin: true, path: "/admin/prof/heap?debug=1", status: 200},
	} {
		req, _ := http.NewRequest("GET", "http://"+addr+tc.path, nil)
		if tc.admin {
			req.Header.Set("X-Admin", "yes")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s admin=%v: %d, want %d", tc.path, tc.admin, resp.StatusCode, tc.status)
		}
	}
}

// At the root (an empty prefix) there is nothing to redirect.
func TestRegisterAtRoot(t *testing.T) {
	s := celeris.New(celeris.Config{})
	pprof.Register(s.Group(""))
	for path, want := range map[string]int{"/": 200, "/heap?debug=1": 200, "/cmdline": 200} {
		if resp := celeristest.Do(s, celeristest.NewRequest("GET", path, nil)); resp.Status != want {
			t.Errorf("%s: %d, want %d", path, resp.Status, want)
		}
	}
}
