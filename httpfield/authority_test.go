package httpfield

import "testing"

func TestValidAuthority(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{in: "example.com", want: true},
		{in: "example.com:8080", want: true},
		{in: "127.0.0.1:80", want: true},
		{in: "localhost:", want: true}, // RFC 3986: port = *DIGIT
		{in: "[::1]", want: true},
		{in: "[::1]:8443", want: true},
		{in: "[2001:db8::7]:80", want: true},
		{in: "[v1.fe80::a+en1]", want: true},
		{in: "ex%41mple.com", want: true},
		{in: "a-b_c~d!$&'()*+,;=", want: true},

		{in: "", want: false},
		{in: ":80", want: false},
		{in: "127.0.0.1:80x", want: false},
		{in: "127.0.0.1:+80", want: false},
		{in: "127.0.0.1: 80", want: false},
		{in: "exa mple.com", want: false},
		{in: "user@example.com", want: false},
		{in: "user:pw@example.com", want: false},
		{in: "example.com\t", want: false},
		{in: "example.com\x00", want: false},
		{in: "exämple.com", want: false},
		{in: "example.com/path", want: false},
		{in: "example.com?q", want: false},
		{in: "example.com#f", want: false},
		{in: "ex%4", want: false},
		{in: "ex%zzmple", want: false},
		{in: "[::1", want: false},
		{in: "[]", want: false},
		{in: "[::1]x", want: false},
		{in: "[::1]:8a", want: false},
		{in: "[zz::1]", want: false},
		{in: "[v.x]", want: false},
		{in: "a:b:c", want: false},
		{in: "\x7f", want: false},
	} {
		if got := ValidAuthority([]byte(tc.in)); got != tc.want {
			t.Errorf("ValidAuthority(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if got := ValidAuthority(tc.in); got != tc.want {
			t.Errorf("ValidAuthority(string %q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func FuzzValidAuthority(f *testing.F) {
	for _, s := range []string{"example.com:80", "[::1]:1", "a%41", "[v1.x]", "h:80:80", "h:", ":", "a:8x", "1.2.3.4:0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if fast, full := ValidAuthority([]byte(s)), validAuthority([]byte(s)); fast != full {
			t.Fatalf("%q: fast path says %v, the full check %v", s, fast, full)
		}
		if b, str := ValidAuthority([]byte(s)), ValidAuthority(s); b != str {
			t.Fatalf("%q: as bytes %v, as a string %v", s, b, str)
		}
		if !ValidAuthority([]byte(s)) {
			return
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c <= ' ' || c >= 0x7f || c == '@' || c == '/' || c == '?' || c == '#' {
				t.Fatalf("accepted %q with byte %q", s, c)
			}
		}
	})
}
