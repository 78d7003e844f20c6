package celeris

import (
	"slices"
	"testing"
)

// FuzzParseRanges: whatever the Range value, the ranges returned lie inside the
// file, are not empty, are at most maxRanges, and several never add up to more
// than the file (range amplification).
func FuzzParseRanges(f *testing.F) {
	for _, s := range []string{"bytes=0-4", "bytes=-3", "bytes=5-", "bytes=0-1,4-5", "bytes=0-9,0-9", "bytes= 1 - 2 , ,", "items=0-1", "bytes=99999999999999999999-"} {
		f.Add(s, int64(10))
	}
	f.Fuzz(func(t *testing.T, v string, size int64) {
		if size < 0 {
			size = -size
		}
		rs, res := parseRanges(v, size)
		if res != rangeOK {
			if len(rs) != 0 {
				t.Fatalf("%q: ranges %v with result %v", v, rs, res)
			}
			return
		}
		if len(rs) == 0 || len(rs) > maxRanges {
			t.Fatalf("%q: %d ranges", v, len(rs))
		}
		var total int64
		for _, r := range rs {
			if r.Start < 0 || r.Start >= r.End || r.End > size {
				t.Fatalf("%q (size %d): range %v", v, size, r)
			}
			total += r.End - r.Start
		}
		if len(rs) > 1 && total > size {
			t.Fatalf("%q: %d bytes asked of %d", v, total, size)
		}
	})
}

// FuzzNegotiate: the pick is one of the offers or "".
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{"", "text/html", "text/*;q=0.5, application/json", "*/*;q=0", ";;,,/", "a/b;q=x;q=0.1"} {
		f.Add(s)
	}
	offers := []string{"application/json", "text/html", "text/plain"}
	f.Fuzz(func(t *testing.T, accept string) {
		if got := negotiate(accept, offers); got != "" && !slices.Contains(offers, got) {
			t.Fatalf("negotiate(%q) = %q", accept, got)
		}
	})
}

// FuzzForwarded: parsing a Forwarded element or a hop never panics, and a hop
// that parses is a valid address.
func FuzzForwarded(f *testing.F) {
	for _, s := range []string{`for=192.0.2.60;proto=https`, `for="[2001:db8::1]:4711"`, `for=""`, `for="`, `;;=`, "[::1]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, elem string) {
		v, _ := forwardedParam(elem, "for")
		if a, ok := parseHop(v); ok && !a.IsValid() {
			t.Fatalf("%q: invalid address %v", v, a)
		}
		_ = ContentDisposition("attachment", elem)
	})
}
