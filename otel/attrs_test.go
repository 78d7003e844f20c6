package celerisotel

import "testing"

func TestMethod(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		known    bool
	}{
		{in: "GET", want: "GET", known: true},
		{in: "PATCH", want: "PATCH", known: true},
		{in: "CONNECT", want: "CONNECT", known: true},
		{in: "get", want: "_OTHER"}, // methods are case-sensitive (RFC 9110 §9.1)
		{in: "PROPFIND", want: "_OTHER"},
		{in: "", want: "_OTHER"},
	} {
		got, known := method(tc.in)
		if got != tc.want || known != tc.known {
			t.Errorf("method(%q) = %q, %v; want %q, %v", tc.in, got, known, tc.want, tc.known)
		}
	}
}

func TestSpanName(t *testing.T) {
	var cache spanNames
	for _, tc := range []struct {
		m     string
		known bool
		route string
		want  string
	}{
		{m: "GET", known: true, route: "/users/:id", want: "GET /users/:id"},
		{m: "POST", known: true, route: "/users/:id", want: "POST /users/:id"},
		{m: "GET", known: true, route: "", want: "GET"},
		{m: "_OTHER", route: "/users/:id", want: "HTTP /users/:id"},
		{m: "_OTHER", route: "", want: "HTTP"},
		{m: "PATCH", known: true, route: "/*path", want: "PATCH /*path"},
	} {
		if got := spanName(tc.m, tc.known, tc.route); got != tc.want {
			t.Errorf("spanName(%q, %v, %q) = %q, want %q", tc.m, tc.known, tc.route, got, tc.want)
		}
		for range 2 { // filled, then from the cache
			if got := cache.name(methodSlot(tc.m), tc.route); got != tc.want {
				t.Errorf("cached name(%q, %v, %q) = %q, want %q", tc.m, tc.known, tc.route, got, tc.want)
			}
		}
	}
}

func TestHostPort(t *testing.T) {
	for _, tc := range []struct {
		host, scheme string
		addr         string
		port         int
	}{
		{host: "example.com:8080", scheme: "http", addr: "example.com", port: 8080},
		{host: "example.com", scheme: "http", addr: "example.com", port: 80},
		{host: "example.com", scheme: "https", addr: "example.com", port: 443},
		{host: "[::1]:9000", scheme: "http", addr: "::1", port: 9000},
		{host: "[::1]", scheme: "https", addr: "::1", port: 443},
		{host: "example.com:99999", scheme: "http", addr: "example.com", port: 0},
		{host: "example.com:x", scheme: "http", addr: "example.com", port: 0},
	} {
		addr, port := hostPort(tc.host, tc.scheme)
		if addr != tc.addr || port != tc.port {
			t.Errorf("hostPort(%q, %q) = %q, %d; want %q, %d", tc.host, tc.scheme, addr, port, tc.addr, tc.port)
		}
	}
}

func TestProtoVersion(t *testing.T) {
	for in, want := range map[string]string{"HTTP/1.0": "1.0", "HTTP/1.1": "1.1", "HTTP/2.0": "2", "HTTP/3.0": "3", "SPDY/3": ""} {
		if got := protoVersion(in); got != want {
			t.Errorf("protoVersion(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactQuery(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{in: "a=1", want: "a=1"},
		{in: "sig=x", want: "sig=REDACTED"},
		{in: "a=1&Signature=abc%2B&AWSAccessKeyId=K&X-Goog-Signature=z&b", want: "a=1&Signature=REDACTED&AWSAccessKeyId=REDACTED&X-Goog-Signature=REDACTED&b"},
		{in: "sig&sigx=1&&", want: "sig&sigx=1&&"},
		{in: "=&sig=", want: "=&sig=REDACTED"},
	} {
		if got := redactQuery(tt.in); got != tt.want {
			t.Errorf("redactQuery(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
