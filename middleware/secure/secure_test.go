package secure_test

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/secure"
)

var defaults = map[string]string{
	"X-Content-Type-Options":       "nosniff",
	"X-Frame-Options":              "DENY",
	"Referrer-Policy":              "strict-origin-when-cross-origin",
	"Cross-Origin-Opener-Policy":   "same-origin",
	"Cross-Origin-Resource-Policy": "same-origin",
	"Cross-Origin-Embedder-Policy": "",
	"Permissions-Policy":           "",
	"Content-Security-Policy":      "",
	"Strict-Transport-Security":    "",
}

func TestHeaders(t *testing.T) {
	page := func(c *celeris.Context) error { return c.HTML(200, `<script nonce="`+secure.Nonce(c)+`"></script>`) }
	cfg := celeris.Config{TrustedProxies: celeris.MustParsePrefixes("127.0.0.1")}
	_, addr := mwtest.StartConfig(t, cfg, func(s *celeris.Server) {
		s.GET("/default", page, secure.New(secure.Config{}))
		s.GET("/year", page, secure.New(secure.Config{HSTSMaxAge: secure.HSTSYear}))
		s.GET("/off", page, secure.New(secure.Config{HSTSMaxAge: -1}))
		s.GET("/custom", page, secure.New(secure.Config{
			HSTSMaxAge: 2 * time.Hour, HSTSIncludeSubdomains: true, HSTSPreload: true,
			ContentSecurityPolicy: "default-src 'self'", CSPReportOnly: true,
			FrameOptions: "SAMEORIGIN", ReferrerPolicy: "no-referrer", CrossOriginOpenerPolicy: "-",
			CrossOriginEmbedderPolicy: "require-corp", PermissionsPolicy: "camera=()",
		}))
		s.GET("/nonce", page, secure.New(secure.Config{
			ContentSecurityPolicy: "script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'",
		}))
		s.GET("/handler-override", func(c *celeris.Context) error {
			c.SetHeader("X-Frame-Options", "SAMEORIGIN")
			c.DelHeader("Cross-Origin-Resource-Policy")
			return c.String(200, "ok")
		}, secure.New(secure.Config{}))
		s.GET("/skip", page, secure.New(secure.Config{Skip: func(*celeris.Context) bool { return true }}))
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		url := "http://" + addr
		check := func(path string, header http.Header, want map[string]string) *http.Response {
			t.Helper()
			resp, _ := mwtest.Get(t, client, url+path, header)
			for name, v := range want {
				if got := resp.Header.Get(name); got != v {
					t.Errorf("%s: %s = %q, want %q", path, name, got, v)
				}
			}
			return resp
		}
		check("/default", nil, defaults)
		// Plaintext, but a trusted proxy says the client used HTTPS.
		// HSTSMaxAge 0 (and negative) is off, as in unrolled/secure and Echo.
		check("/default", mwtest.H("X-Forwarded-Proto", "https"),
			map[string]string{"Strict-Transport-Security": "", "X-Frame-Options": "DENY"})
		check("/off", mwtest.H("X-Forwarded-Proto", "https"), map[string]string{"Strict-Transport-Security": ""})
		check("/year", mwtest.H("X-Forwarded-Proto", "https"),
			map[string]string{"Strict-Transport-Security": "max-age=31536000"})
		check("/custom", mwtest.H("X-Forwarded-Proto", "https"), map[string]string{
			"Strict-Transport-Security":           "max-age=7200; includeSubDomains; preload",
			"Content-Security-Policy-Report-Only": "default-src 'self'",
			"Content-Security-Policy":             "",
			"X-Frame-Options":                     "SAMEORIGIN",
			"Referrer-Policy":                     "no-referrer",
			"Cross-Origin-Opener-Policy":          "",
			"Cross-Origin-Embedder-Policy":        "require-corp",
			"Permissions-Policy":                  "camera=()",
		})
		check("/handler-override", nil, map[string]string{"X-Frame-Options": "SAMEORIGIN", "Cross-Origin-Resource-Policy": ""})
		skipped := map[string]string{}
		for k := range defaults {
			skipped[k] = ""
		}
		check("/skip", nil, skipped)

		// A fresh nonce per request, the same in both directives and in the page.
		// base64url without padding: 22 characters of [A-Za-z0-9_-] for 16 bytes.
		re := regexp.MustCompile(`^script-src 'nonce-([A-Za-z0-9_-]{22})'; style-src 'nonce-([A-Za-z0-9_-]{22})'$`)
		seen := map[string]bool{}
		for range 3 {
			resp, body := mwtest.Get(t, client, url+"/nonce", nil)
			m := re.FindStringSubmatch(resp.Header.Get("Content-Security-Policy"))
			if m == nil || m[1] != m[2] {
				t.Fatalf("CSP %q", resp.Header.Get("Content-Security-Policy"))
			}
			if raw, err := base64.RawURLEncoding.DecodeString(m[1]); err != nil || len(raw) != 16 {
				t.Errorf("nonce %q: %d bytes, %v", m[1], len(raw), err)
			}
			if body != `<script nonce="`+m[1]+`"></script>` {
				t.Errorf("page %q does not carry nonce %q", body, m[1])
			}
			if seen[m[1]] {
				t.Errorf("nonce %q repeated", m[1])
			}
			seen[m[1]] = true
		}
	})
}

// HSTS on a real TLS connection (no proxy headers), and never on plaintext from
// an untrusted peer even if it claims HTTPS.
func TestHSTSOverTLS(t *testing.T) {
	cert, err := selfcert.New("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ok := func(c *celeris.Context) error { return c.String(200, "ok") }
	s, addr := mwtest.StartConfig(t, celeris.Config{TLSAddr: "127.0.0.1:0",
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}}, func(s *celeris.Server) {
		s.Use(secure.New(secure.Config{HSTSMaxAge: secure.HSTSYear, HSTSIncludeSubdomains: true}))
		s.GET("/", ok)
	})
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool()}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, _ := mwtest.Get(t, &http.Client{Transport: tr}, "https://"+s.TLSAddr().String()+"/", nil)
	if got := resp.Header.Get("Strict-Transport-Security"); got != "max-age=31536000; includeSubDomains" || resp.ProtoMajor != 2 {
		t.Errorf("TLS (%s): HSTS %q", resp.Proto, got)
	}
	resp, _ = mwtest.Get(t, mwtest.Client(t), "http://"+addr+"/", mwtest.H("X-Forwarded-Proto", "https"))
	if got := resp.Header.Get("Strict-Transport-Security"); got != "" {
		t.Errorf("plaintext from an untrusted peer: HSTS %q", got)
	}
}

func TestHSTS(t *testing.T) {
	for _, tt := range []struct {
		age      time.Duration
		sub, pre bool
		want     string
	}{
		{age: time.Hour, want: "max-age=3600"},
		{age: 1500 * time.Millisecond, sub: true, want: "max-age=1; includeSubDomains"},
		{age: 0, pre: true, want: "max-age=0; preload"},
	} {
		if got := secure.HSTS(tt.age, tt.sub, tt.pre); got != tt.want {
			t.Errorf("HSTS(%v, %v, %v) = %q, want %q", tt.age, tt.sub, tt.pre, got, tt.want)
		}
	}
}

// Answers the server makes without middleware (here 431 and 414 from the
// HTTP/1.1 parser) carry the headers through RefusalHeader, merged with
// another RefusalHeader's; over a raw socket, read by net/http.
func TestRefusalHeader(t *testing.T) {
	sc := secure.Config{ContentSecurityPolicy: "script-src 'nonce-{nonce}'", HSTSMaxAge: secure.HSTSYear}
	more := func(status int) http.Header { return http.Header{"X-Request-Id": {"r-" + strconv.Itoa(status)}} }
	cfg := celeris.Config{MaxHeaderBytes: 16 << 10, MaxURILength: 8 << 10, RefusalHeader: secure.RefusalHeader(sc, more)}
	_, addr := mwtest.StartConfig(t, cfg, func(s *celeris.Server) {
		s.GET("/", func(c *celeris.Context) error { return c.String(200, "ok") }, secure.New(sc))
	})
	for _, tt := range []struct {
		req    string
		status int
	}{
		{req: "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 20<<10) + "\r\n\r\n", status: 431},
		{req: "GET /" + strings.Repeat("a", 9<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n", status: 414},
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		go func() { _, _ = conn.Write([]byte(tt.req)) }()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		conn.Close()
		if err != nil || resp.StatusCode != tt.status {
			t.Fatalf("%v %v, want %d", resp, err, tt.status)
		}
		for name, want := range map[string]string{
			"X-Frame-Options":           "DENY",
			"X-Content-Type-Options":    "nosniff",
			"Content-Security-Policy":   "default-src 'none'",
			"Strict-Transport-Security": "",
			"X-Request-Id":              "r-" + strconv.Itoa(tt.status),
		} {
			if got := resp.Header.Get(name); got != want {
				t.Errorf("%d: %s = %q, want %q", tt.status, name, got, want)
			}
		}
	}
}
