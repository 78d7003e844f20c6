package h1

import (
	"testing"

	"github.com/celeris-dev/celeris/httpfield"
)

// TestHostCache: validHost answers as httpfield.ValidAuthority whatever it saw
// before, and remembers only valid values that fit.
func TestHostCache(t *testing.T) {
	long := "a123456789b123456789c123456789d123456789e123456789f123456789abc" // 63 bytes
	for _, tc := range []struct {
		name     string
		seq      []string
		want     []bool
		remember string // what the cache holds at the end
	}{
		{name: "repeat", seq: []string{"h:80", "h:80"}, want: []bool{true, true}, remember: "h:80"},
		{name: "same length, invalid", seq: []string{"h:80", "h:8x"}, want: []bool{true, false}, remember: "h:80"},
		{name: "prefix", seq: []string{"h:80", "h:8"}, want: []bool{true, true}, remember: "h:8"},
		{name: "empty never valid", seq: []string{"", ""}, want: []bool{false, false}, remember: ""},
		{name: "empty after valid", seq: []string{"h", ""}, want: []bool{true, false}, remember: "h"},
		{name: "63 bytes kept", seq: []string{long, long}, want: []bool{true, true}, remember: long},
		{name: "64 bytes not kept", seq: []string{"h", long + "x"}, want: []bool{true, true}, remember: "h"},
		{name: "userinfo", seq: []string{"a@b", "a@b"}, want: []bool{false, false}, remember: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c hostCache
			for i, v := range tc.seq {
				if got := c.validHost([]byte(v)); got != tc.want[i] {
					t.Fatalf("validHost(%q) (call %d) = %v, want %v", v, i, got, tc.want[i])
				}
			}
			if got := string(c.b[:c.n]); got != tc.remember {
				t.Fatalf("remembers %q, want %q", got, tc.remember)
			}
		})
	}
}

// FuzzHostCache: after any value, validHost of the next equals ValidAuthority.
func FuzzHostCache(f *testing.F) {
	f.Add([]byte("127.0.0.1:8080"), []byte("127.0.0.1:808x"))
	f.Add([]byte("[::1]:80"), []byte("[::1]:80"))
	f.Add([]byte("a"), []byte(""))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var c hostCache
		if got, want := c.validHost(a), httpfield.ValidAuthority(a); got != want {
			t.Fatalf("validHost(%q) = %v, ValidAuthority %v", a, got, want)
		}
		if got, want := c.validHost(b), httpfield.ValidAuthority(b); got != want {
			t.Fatalf("after %q: validHost(%q) = %v, ValidAuthority %v", a, b, got, want)
		}
	})
}
