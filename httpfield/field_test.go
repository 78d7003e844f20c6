package httpfield

import (
	"strings"
	"testing"
)

// TestValidName: RFC 9110 §5.1 "field-name = token", §5.6.2 tchar.
func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{name: "Content-Type", want: true},
		{name: "x-request-id", want: true},
		{name: "!#$%&'*+-.^_`|~09azAZ", want: true},
		{name: "X-Very-Long-Field-Name-Past-Four", want: true},
		{name: "", want: false},
		{name: "Bad Name", want: false}, // SP
		{name: "X:y", want: false},      // ':' is a separator
		{name: ":status", want: false},  // pseudo-header fields are not sent by handlers
		{name: "X\tY", want: false},     // HTAB
		{name: "X\r\nInjected", want: false},
		{name: "X\x00", want: false},
		{name: "caf\xc3\xa9", want: false}, // non-ASCII
		{name: "a(b)", want: false},
		{name: "a\"b", want: false},
		{name: "a/b", want: false},
		{name: "a@b", want: false},
		{name: "a{b}", want: false},
		{name: "x\x7f", want: false}, // DEL
	} {
		if got := ValidName(tc.name); got != tc.want {
			t.Errorf("ValidName(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestValidValue: RFC 9110 §5.5; control characters but HTAB refused wherever
// they are, in values shorter and longer than a word, obs-text and HTAB kept;
// SafeValue refuses CR, LF and NUL only.
func TestValidValue(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
		safe  bool // SafeValue's verdict, when want is false
	}{
		{value: "", want: true},
		{value: "text/html; charset=utf-8", want: true},
		{value: "a\tb", want: true},                 // HTAB
		{value: "caf\xc3\xa9 \x80\xff", want: true}, // obs-text
		{value: "bell\x07", safe: true},             // other CTL: not sent, kept when received
		{value: "del\x7f", safe: true},
		{value: strings.Repeat("x", 12) + "\x1b", safe: true},
		{value: "\x7f" + strings.Repeat("x", 12), safe: true},
		{value: "a\r\nInjected: 1", want: false},
		{value: "a\nb", want: false},
		{value: "a\rb", want: false},
		{value: "a\x00b", want: false},
		{value: "\x00", want: false},
		{value: strings.Repeat("x", 15) + "\n", want: false}, // in the overlapping last word
		{value: strings.Repeat("x", 16) + "\r", want: false},
		{value: "\n" + strings.Repeat("x", 16), want: false},
		{value: strings.Repeat("\t", 17), want: true},
	} {
		if got := ValidValue(tc.value); got != tc.want {
			t.Errorf("ValidValue(%q) = %v, want %v", tc.value, got, tc.want)
		}
		if got := SafeValue(tc.value); got != (tc.want || tc.safe) {
			t.Errorf("SafeValue(%q) = %v, want %v", tc.value, got, tc.want || tc.safe)
		}
	}
}

// TestValidValueEveryByte checks the word-at-a-time scans against byte-by-byte ones, with
// every byte value at every position of values of 0 to 24 bytes.
func TestValidValueEveryByte(t *testing.T) {
	ref := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 && s[i] != '\t' || s[i] == 0x7f {
				return false
			}
		}
		return true
	}
	safe := func(s string) bool { return !strings.ContainsAny(s, "\r\n\x00") }
	base := []byte("abcdefgh\tijklmnop qrstuvw")
	for n := 0; n <= 24; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				v := append([]byte(nil), base[:n]...)
				v[pos] = byte(c)
				if got, want := ValidValue(string(v)), ref(string(v)); got != want {
					t.Fatalf("ValidValue(%q) = %v, want %v", v, got, want)
				}
				if got, want := SafeValue(string(v)), safe(string(v)); got != want {
					t.Fatalf("SafeValue(%q) = %v, want %v", v, got, want)
				}
			}
		}
		if got := ValidValue(string(base[:n])); !got {
			t.Fatalf("ValidValue(%q) = false", base[:n])
		}
	}
}

// FuzzValidValue: the word-at-a-time check agrees with a byte loop.
func FuzzValidValue(f *testing.F) {
	for _, s := range []string{"", "abc", "a\tb\x80", strings.Repeat("y", 9) + "\x00", "\r" + strings.Repeat("z", 20)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := !strings.ContainsAny(s, "\r\n\x00")
		if got := SafeValue(s); got != want {
			t.Fatalf("SafeValue(%q) = %v, want %v", s, got, want)
		}
		want = !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f })
		if got := ValidValue(s); got != want {
			t.Fatalf("ValidValue(%q) = %v, want %v", s, got, want)
		}
		name := strings.Map(func(r rune) rune {
			if r < 0x80 && IsTchar(byte(r)) {
				return r
			}
			return -1
		}, s)
		if got := ValidName(name); got != (name != "") {
			t.Fatalf("ValidName(%q) = %v", name, got)
		}
	})
}

// TestConnectionSpecific: RFC 9113 §8.2.2, RFC 9114 §4.2, in any case; TE
// "trailers" only.
func TestConnectionSpecific(t *testing.T) {
	for _, n := range []string{"Connection", "connection", "KEEP-ALIVE", "Proxy-Connection", "Transfer-Encoding", "upgrade"} {
		if !ConnectionSpecific(n) {
			t.Errorf("%q is connection-specific", n)
		}
	}
	for _, n := range []string{"te", "TE", "Content-Length", "Connections", "upgrade-insecure-requests", "keep-alivf", ""} {
		if ConnectionSpecific(n) {
			t.Errorf("%q is not connection-specific", n)
		}
	}
	if !ValidTE("trailers") || ValidTE("gzip") || ValidTE("trailers, deflate") || ValidTE("") {
		t.Error("TE: trailers only")
	}
}

// TestForbiddenTrailer: RFC 9110 §6.5.1, net/http's badTrailer list, pseudo-
// header fields.
func TestForbiddenTrailer(t *testing.T) {
	for _, n := range []string{"Content-Length", "transfer-encoding", "Host", "Authorization", "Set-Cookie", "If-None-Match", "if-match", "Cache-Control", "Content-Type", "Trailer", "TE", ":status", "Connection", "Upgrade", ""} {
		if !ForbiddenTrailer(n) {
			t.Errorf("%q may not be a trailer", n)
		}
	}
	for _, n := range []string{"Grpc-Status", "x-checksum", "Server-Timing", "If", "Iff"} {
		if ForbiddenTrailer(n) {
			t.Errorf("%q may be a trailer", n)
		}
	}
}

// TestCheckRequestField: RFC 9113 §8.2.1, RFC 9114 §4.2.
func TestCheckRequestField(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		bad         bool
	}{
		{name: "accept", value: "*/*"},
		{name: ":path", value: "/a?b"},
		{name: ":authority", value: "example.com:443"},
		{name: "host", value: "[::1]:8080"},
		{name: "x", value: "caf\xc3\xa9"},
		{name: "", value: "v", bad: true},
		{name: "Accept", value: "*/*", bad: true}, // upper case
		{name: "a b", value: "v", bad: true},
		{name: ":Path", value: "/", bad: true},
		{name: "x", value: "a\x00b", bad: true},
		{name: "x", value: "a\rb", bad: true},
		{name: "x", value: "a\nb", bad: true},
		{name: "x", value: " lead", bad: true},
		{name: "x", value: "trail\t", bad: true},
		{name: ":authority", value: "user@example.com", bad: true},
		{name: ":authority", value: "", bad: true},
		{name: "host", value: "a b", bad: true},
	} {
		if got := CheckRequestField(tc.name, tc.value); (got != "") != tc.bad {
			t.Errorf("CheckRequestField(%q, %q) = %q, bad %v", tc.name, tc.value, got, tc.bad)
		}
	}
}

// TestRequestHead: the rules on a request section as a whole, RFC 9113 §8.3.1,
// RFC 9114 §4.3.1 and §4.4, RFC 8441 §4, RFC 9220 §3.
func TestRequestHead(t *testing.T) {
	get := []string{":method", "GET", ":scheme", "https", ":path", "/", ":authority", "a"}
	with := func(extra ...string) []string { return append(append([]string{}, get...), extra...) }
	for _, tc := range []struct {
		name          string
		fields        []string
		allowProtocol bool
		authorityRule bool
		bad           bool
	}{
		{name: "GET", fields: get},
		{name: "te trailers", fields: with("te", "trailers")},
		{name: "OPTIONS *", fields: []string{":method", "OPTIONS", ":scheme", "https", ":path", "*", ":authority", "a"}},
		{name: "CONNECT", fields: []string{":method", "CONNECT", ":authority", "example.com:443"}},
		{name: "extended CONNECT", allowProtocol: true, fields: []string{":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":path", "/chat", ":authority", "a"}},
		{name: "Host only", authorityRule: true, fields: []string{":method", "GET", ":scheme", "https", ":path", "/", "host", "a"}},
		{name: "Host equal", authorityRule: true, fields: with("host", "a")},
		{name: "Host differs, HTTP/2", fields: with("host", "b")},

		{name: "Host differs, HTTP/3", authorityRule: true, fields: with("host", "b"), bad: true},
		{name: "no authority, HTTP/3", authorityRule: true, fields: []string{":method", "GET", ":scheme", "https", ":path", "/"}, bad: true},
		{name: "te gzip", fields: with("te", "gzip"), bad: true},
		{name: "connection", fields: with("connection", "close"), bad: true},
		{name: "keep-alive", fields: with("keep-alive", "1"), bad: true},
		{name: "proxy-connection", fields: with("proxy-connection", "x"), bad: true},
		{name: "transfer-encoding", fields: with("transfer-encoding", "chunked"), bad: true},
		{name: "upgrade", fields: with("upgrade", "h2c"), bad: true},
		{name: "pseudo after regular", fields: []string{":method", "GET", "accept", "x", ":scheme", "https", ":path", "/"}, bad: true},
		{name: "repeated :path", fields: with(":path", "/b"), bad: true},
		{name: ":status", fields: with(":status", "200"), bad: true},
		{name: "unknown pseudo", fields: with(":foo", "x"), bad: true},
		{name: ":protocol not allowed", fields: []string{":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":path", "/", ":authority", "a"}, bad: true},
		{name: ":protocol on GET", allowProtocol: true, fields: []string{":method", "GET", ":protocol", "websocket", ":scheme", "https", ":path", "/", ":authority", "a"}, bad: true},
		{name: "extended CONNECT without :path", allowProtocol: true, fields: []string{":method", "CONNECT", ":protocol", "websocket", ":scheme", "https", ":authority", "a"}, bad: true},
		{name: "CONNECT with :path", fields: []string{":method", "CONNECT", ":authority", "a:443", ":path", "/"}, bad: true},
		{name: "missing :scheme", fields: []string{":method", "GET", ":path", "/", ":authority", "a"}, bad: true},
		{name: "empty :path", fields: []string{":method", "GET", ":scheme", "https", ":path", "", ":authority", "a"}, bad: true},
		{name: "bad :method", fields: []string{":method", "G(T", ":scheme", "https", ":path", "/", ":authority", "a"}, bad: true},
		{name: "* not OPTIONS", fields: []string{":method", "GET", ":scheme", "https", ":path", "*", ":authority", "a"}, bad: true},
		{name: "absolute :path", fields: []string{":method", "GET", ":scheme", "https", ":path", "http://a/", ":authority", "a"}, bad: true},
		{name: "upper-case name", fields: with("Accept", "x"), bad: true},
	} {
		var h RequestHead
		msg := ""
		for i := 0; i < len(tc.fields) && msg == ""; i += 2 {
			msg = h.Field(tc.fields[i], tc.fields[i+1], tc.allowProtocol)
		}
		if msg == "" {
			msg = h.Check(tc.authorityRule)
		}
		if (msg != "") != tc.bad {
			t.Errorf("%s: %q, bad %v", tc.name, msg, tc.bad)
		}
	}
}

// TestCheckRequestTrailer: RFC 9113 §8.1, RFC 9114 §4.3.
func TestCheckRequestTrailer(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		bad         bool
	}{
		{name: "x-checksum", value: "abc"},
		{name: ":path", value: "/", bad: true},
		{name: "connection", value: "close", bad: true},
		{name: "X-Upper", value: "v", bad: true},
		{name: "x", value: "a\nb", bad: true},
	} {
		if got := CheckRequestTrailer(tc.name, tc.value); (got != "") != tc.bad {
			t.Errorf("CheckRequestTrailer(%q, %q) = %q, bad %v", tc.name, tc.value, got, tc.bad)
		}
	}
}
