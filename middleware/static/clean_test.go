package static

import (
	"errors"
	"testing"

	"github.com/celeris-dev/celeris"
)

// TestClean checks the path rules on raw parameters directly, whatever the server
// in front rejects first.
func TestClean(t *testing.T) {
	s := &server{}
	tests := []struct {
		raw, name string
		status    int
	}{
		{raw: "", name: "."},
		{raw: "a/b.css", name: "a/b.css"},
		{raw: "a//b/./c/", name: "a/b/c"},
		{raw: "/etc/passwd", name: "etc/passwd"}, // stays inside the FS root
		{raw: "a%20b", name: "a b"},
		{raw: "..", status: 400},
		{raw: "../x", status: 400},
		{raw: "a/../../x", status: 400},
		{raw: "a/..", status: 400},
		{raw: "%2e%2e/x", status: 400},
		{raw: "%2E%2E%2Fx", status: 400},
		{raw: "..%2fx", status: 400},
		{raw: "a\\..\\x", status: 400},
		{raw: "%5c..%5cx", status: 400},
		{raw: "a%00b", status: 400},
		{raw: "a\x00b", status: 400},
		{raw: "%zz", status: 400},
		{raw: "%", status: 400},
		{raw: ".env", status: 404},
		{raw: "a/.git/config", status: 404},
		{raw: "%2eenv", status: 404},
		{raw: "...", status: 404},
	}
	for _, tt := range tests {
		name, err := s.clean(tt.raw)
		status := 0
		var he *celeris.HTTPError
		if errors.As(err, &he) {
			status = he.Code
		}
		if name != tt.name || status != tt.status {
			t.Errorf("clean(%q) = %q, %d; want %q, %d", tt.raw, name, status, tt.name, tt.status)
		}
	}
	s.cfg.Dotfiles = true
	if name, err := s.clean("a/.well-known/x"); err != nil || name != "a/.well-known/x" {
		t.Errorf("Dotfiles: %q %v", name, err)
	}
	if _, err := s.clean("../x"); err == nil {
		t.Error("Dotfiles admits ..")
	}
}

func FuzzClean(f *testing.F) {
	f.Add("a/../b")
	f.Add("%2e%2e/x")
	s := &server{}
	f.Fuzz(func(t *testing.T, raw string) {
		name, err := s.clean(raw)
		if err == nil && (name == ".." || len(name) >= 3 && name[:3] == "../") {
			t.Fatalf("clean(%q) escapes: %q", raw, name)
		}
	})
}
