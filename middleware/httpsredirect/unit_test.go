package httpsredirect_test

import (
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/middleware/httpsredirect"
)

// Where each request goes, by configuration, without a network.
func TestLocations(t *testing.T) {
	ok := func(c *celeris.Context) error { return c.String(200, "served") }
	for _, tc := range []struct {
		name   string
		cfg    httpsredirect.Config
		target string
		header [2]string
		status int
		loc    string
	}{
		{name: "plain", target: "http://example.com/a/b?x=1&y=2", status: 308, loc: "https://example.com/a/b?x=1&y=2"},
		{name: "port dropped", target: "http://example.com:8080/", status: 308, loc: "https://example.com/"},
		{name: "tls port", cfg: httpsredirect.Config{TLSPort: "8443"}, target: "http://example.com:8080/p", status: 308, loc: "https://example.com:8443/p"},
		{name: "443 left out", cfg: httpsredirect.Config{TLSPort: "443"}, target: "http://example.com/p", status: 308, loc: "https://example.com/p"},
		{name: "ipv6", cfg: httpsredirect.Config{TLSPort: "8443"}, target: "http://[::1]:8080/p", status: 308, loc: "https://[::1]:8443/p"},
		{name: "ipv6 no port", target: "http://[::1]:8080/p", status: 308, loc: "https://[::1]/p"},
		{name: "code", cfg: httpsredirect.Config{Code: 301}, target: "http://example.com/p", status: 301, loc: "https://example.com/p"},
		{name: "https passes", target: "https://example.com/p", status: 200},
		{name: "forwarded untrusted", target: "http://example.com/p", header: [2]string{"X-Forwarded-Proto", "https"}, status: 308, loc: "https://example.com/p"},
		{name: "forwarded trusted", cfg: httpsredirect.Config{TrustForwardedProto: true}, target: "http://example.com/p", header: [2]string{"X-Forwarded-Proto", "HTTPS"}, status: 200},
		{name: "forwarded http", cfg: httpsredirect.Config{TrustForwardedProto: true}, target: "http://example.com/p", header: [2]string{"X-Forwarded-Proto", "http"}, status: 308, loc: "https://example.com/p"},
	} {
		req := celeristest.NewRequest("GET", tc.target, nil)
		if tc.header[0] != "" {
			req = req.WithHeader(tc.header[0], tc.header[1])
		}
		resp := celeristest.Run(ok, req, httpsredirect.New(tc.cfg))
		if resp.Status != tc.status || resp.Header.Get("Location") != tc.loc {
			t.Errorf("%s: %d %q, want %d %q", tc.name, resp.Status, resp.Header.Get("Location"), tc.status, tc.loc)
		}
	}
}
