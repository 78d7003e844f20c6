package celerish3

import (
	"slices"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/httpfield"
)

// FuzzFieldVerdictsH3 is the core module's FuzzFieldVerdicts for HTTP/3's
// writer: a response field, as a header and as a trailer, is sent exactly when
// the field rules (package httpfield) say so, unchanged (its name in lower
// case, RFC 9114 §4.2), as by the HTTP/1.1 and HTTP/2 writers.
func FuzzFieldVerdictsH3(f *testing.F) {
	for _, s := range [][2]string{
		{"X-Ok", "fine\tvalue"}, {"x-lower", "caf\xc3\xa9 \x80\xff"}, {"X-Ctl", "bell\x07"},
		{"X-Del", "a\x7f"}, {"X-Empty", ""}, {"!#$%&'*+-.^_`|~09", "v"}, {"Bad Name", "v"},
		{"X:y", "v"}, {"", "v"}, {":status", "500"}, {"X-Nul", "a\x00b"},
		{"X-CRLF", "a\r\nInjected: 1"}, {"X\r\nSplit", "v"}, {"caf\xc3\xa9", "v"},
		{"Set-Cookie", "a=b"}, {"X-Checksum", strings.Repeat("c", 40)},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		if httpfield.ConnectionSpecific(name) {
			return // dropped by the writer whatever the rules on their syntax
		}
		switch strings.ToLower(name) {
		case "content-length", "date", ":status":
			return // the writer's own
		}
		var s reqStream // a field slice, without naming the field type
		fields := slices.Grow(s.req.Header, 1)[:1]
		fields[0].Name, fields[0].Value = name, value
		want := httpfield.ValidResponseField(name, value)
		for _, trailer := range []bool{false, true} {
			status := 200
			if trailer {
				status = 0
				want = want && !httpfield.ForbiddenTrailer(name)
			}
			var e fieldEncoder
			frame := e.appendHeaders(nil, status, fields, false, -1)
			_, length, n := parseFrameHeader(frame)
			sent := false
			err := decodeFields(frame[n:n+int(length)], 1<<20, nil, func(n, v string) error {
				if n == strings.ToLower(name) && v == value {
					sent = true
				}
				return nil
			})
			if err != nil || sent != want {
				t.Fatalf("trailer %v: field %q: %q sent %v (%v), the rules say %v", trailer, name, value, sent, err, want)
			}
		}
	})
}
