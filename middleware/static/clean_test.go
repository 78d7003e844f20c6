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

func TestParseRange(t *testing.T) {
	tests := []struct {
		v          string
		size       int64
		start, end int64
		res        rangeResult
	}{
		{v: "bytes=0-0", size: 10, start: 0, end: 1, res: rangeOK},
		{v: "bytes=0-9", size: 10, start: 0, end: 10, res: rangeOK},
		{v: "bytes=0-99", size: 10, start: 0, end: 10, res: rangeOK},
		{v: "BYTES= 3-", size: 10, start: 3, end: 10, res: rangeOK},
		{v: "bytes=-1", size: 10, start: 9, end: 10, res: rangeOK},
		{v: "bytes=-10", size: 10, start: 0, end: 10, res: rangeOK},
		{v: "bytes=10-", size: 10, res: rangeUnsatisfiable},
		{v: "bytes=-0", size: 10, res: rangeUnsatisfiable},
		{v: "bytes=0-", size: 0, res: rangeUnsatisfiable},
		{v: "bytes=-5", size: 0, res: rangeUnsatisfiable},
		{v: "bytes=5-4", size: 10, res: rangeIgnore},
		{v: "bytes=1-2,4-5", size: 10, res: rangeIgnore},
		{v: "bytes=a-b", size: 10, res: rangeIgnore},
		{v: "bytes=+1-2", size: 10, res: rangeIgnore},
		{v: "bytes=-", size: 10, res: rangeIgnore},
		{v: "bytes=", size: 10, res: rangeIgnore},
		{v: "bytes=99999999999999999999-", size: 10, res: rangeIgnore},
		{v: "pages=1-2", size: 10, res: rangeIgnore},
	}
	for _, tt := range tests {
		start, end, res := parseRange(tt.v, tt.size)
		if res != tt.res || (res == rangeOK && (start != tt.start || end != tt.end)) {
			t.Errorf("parseRange(%q, %d) = %d, %d, %v", tt.v, tt.size, start, end, res)
		}
	}
}

func FuzzParseRange(f *testing.F) {
	f.Add("bytes=0-5", int64(10))
	f.Add("bytes=-3", int64(2))
	f.Fuzz(func(t *testing.T, v string, size int64) {
		if size < 0 {
			return
		}
		start, end, res := parseRange(v, size)
		if res == rangeOK && (start < 0 || end > size || start >= end) {
			t.Fatalf("parseRange(%q, %d) = [%d, %d)", v, size, start, end)
		}
	})
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
