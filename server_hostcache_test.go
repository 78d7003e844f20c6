package celeris

import "testing"

// RFC 9112 §3.2 on a keep-alive connection: the parser remembers the last Host
// value found valid and compares the next one with it by bytes, so a connection
// that repeats its Host skips the scan. A value that differs from it in any byte,
// however close, is validated afresh and refused; a repeated Host field is
// refused even when both equal the remembered value.
func TestH1HardenHostCached(t *testing.T) {
	hs := startHarden(t, Config{RefusalHeader: refusedHeader}, nil)
	for _, tc := range []struct{ name, good, bad string }{
		{name: "port byte changed", good: "127.0.0.1:8080", bad: "127.0.0.1:808x"},
		{name: "userinfo of the same length", good: "ab.example", bad: "a@.example"},
		{name: "prefix of the remembered value", good: "example.com:80", bad: "example.com:8/"},
		{name: "repeated field", good: "x", bad: "x\r\nHost: x"},
		{name: "longer than the cache", good: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", bad: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := dialRaw(t, hs.addr)
			good := "GET /after HTTP/1.1\r\nHost: " + tc.good + "\r\n\r\n"
			rc.send(good + good)
			for range 2 {
				if got := bodyString(t, rc.readResponse("GET")); got != "after" {
					t.Fatalf("valid Host %q: body %q", tc.good, got)
				}
			}
			rc.send("GET /after HTTP/1.1\r\nHost: " + tc.bad + "\r\n\r\n" + smuggled)
			resp := rc.readResponse("GET")
			if resp.StatusCode != 400 || resp.Header.Get("X-Refused") != "400" {
				t.Fatalf("Host %q after %q: status %d (X-Refused %q), want a 400 refusal",
					tc.bad, tc.good, resp.StatusCode, resp.Header.Get("X-Refused"))
			}
			rc.expectClosed()
		})
	}
}
