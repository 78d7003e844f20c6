package h1

import (
	"strings"
	"testing"
)

// TestNotHTTP: a refused head is closed without an HTTP/1.1 answer only when its
// first line ended without an HTTP version; a line that has not ended (a
// request-target refused 414 before its end) is answered.
func TestNotHTTP(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{in: "GET /" + strings.Repeat("a", 70<<10), want: false},
		{in: "GET /a HTTP/1.1\r\n", want: false},
		{in: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", want: false},
		{in: "GET /a\r\n", want: true}, // HTTP/0.9
		{in: "SSH-2.0-OpenSSH_9.6\r\n", want: true},
		{in: "", want: false},
	} {
		if got := notHTTP([]byte(tc.in)); got != tc.want {
			t.Errorf("notHTTP(%.40q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
