package csrf_test

import (
	"crypto/tls"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/middleware/csrf"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

func TestCheck(t *testing.T) {
	trusted := map[string]bool{"https://partner.example": true}
	const host = "app.example"
	for _, tt := range []struct {
		method, site, origin string
		want                 csrf.Verdict
	}{
		{method: "GET", site: "cross-site", origin: "https://evil.example", want: csrf.Allowed},
		{method: "HEAD", site: "cross-site", want: csrf.Allowed},
		{method: "OPTIONS", site: "cross-site", want: csrf.Allowed},
		{method: "POST", site: "same-origin", want: csrf.Allowed},
		{method: "POST", site: "none", want: csrf.Allowed},
		{method: "POST", site: "same-site", origin: "https://sub.app.example", want: csrf.CrossOrigin},
		{method: "POST", site: "cross-site", origin: "https://evil.example", want: csrf.CrossOrigin},
		{method: "POST", site: "cross-site", want: csrf.CrossOrigin},
		{method: "DELETE", site: "cross-site", origin: "https://partner.example", want: csrf.Allowed},
		{method: "POST", site: "cross-site", origin: "https://partner.example:8443", want: csrf.CrossOrigin},
		{method: "POST", origin: "https://app.example", want: csrf.Allowed},
		{method: "POST", origin: "http://APP.example", want: csrf.CrossOrigin},
		{method: "PUT", origin: "https://evil.example", want: csrf.CrossOrigin},
		{method: "POST", origin: "https://app.example:444", want: csrf.CrossOrigin},
		{method: "POST", origin: "null", want: csrf.CrossOrigin},
		{method: "POST", origin: "https://partner.example", want: csrf.Allowed},
		{method: "PATCH", want: csrf.Unknown},
		{method: "POST", site: "bogus", want: csrf.CrossOrigin},
	} {
		if got := csrf.Check(tt.method, host, tt.site, tt.origin, trusted); got != tt.want {
			t.Errorf("Check(%s, site %q, origin %q) = %d, want %d", tt.method, tt.site, tt.origin, got, tt.want)
		}
	}
}

// FuzzCheck compares Check with Go's http.CrossOriginProtection, which it
// follows: a request Check refuses is one Go refuses, with the same trusted
// origin.
func FuzzCheck(f *testing.F) {
	f.Add("POST", "a.example", "cross-site", "https://a.example")
	f.Add("GET", "", "", "")
	f.Add("POST", "a.example:1", "", "http://a.example:1")
	f.Add("PUT", "a.example", "", "https://trusted.example")
	f.Add("DELETE", "a.example", "same-site", "https://trusted.example")
	f.Add("POST", "a.example", "", "http://a.example/path")
	f.Add("POST", "A.example", "", "http://a.example")
	const trustedOrigin = "https://trusted.example"
	std := http.NewCrossOriginProtection()
	if err := std.AddTrustedOrigin(trustedOrigin); err != nil {
		f.Fatal(err)
	}
	trusted := map[string]bool{trustedOrigin: true}
	f.Fuzz(func(t *testing.T, method, host, site, origin string) {
		req := &http.Request{Method: method, Host: host, Header: http.Header{}}
		if site != "" {
			req.Header.Set("Sec-Fetch-Site", site)
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if got, goErr := csrf.Check(method, host, site, origin, trusted), std.Check(req); (got == csrf.CrossOrigin) != (goErr != nil) {
			t.Fatalf("Check(%q, %q, %q, %q) = %d, http.CrossOriginProtection: %v", method, host, site, origin, got, goErr)
		}
		v := csrf.Check(method, host, site, origin, nil)
		if method == "GET" && v != csrf.Allowed {
			t.Fatalf("GET refused: %d", v)
		}
		if site == "cross-site" && method == "POST" && v != csrf.CrossOrigin {
			t.Fatalf("cross-site POST: %d", v)
		}
		if site == "" && origin == "" && method == "POST" && v != csrf.Unknown {
			t.Fatalf("no headers: %d", v)
		}
	})
}

func TestMiddleware(t *testing.T) {
	ok := func(c *celeris.Context) error { return c.String(200, "done") }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.POST("/plain", ok, csrf.New(csrf.Config{TrustedOrigins: []string{"https://partner.example"}}))
		s.POST("/hook", ok, csrf.New(csrf.Config{Skip: func(c *celeris.Context) bool { return c.Header("X-Signature") != "" }}))
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, tt := range []struct {
			name, path string
			header     http.Header
			status     int
		}{
			{name: "no headers", path: "/plain", status: 200},
			{name: "same-origin", path: "/plain", header: mwtest.H("Sec-Fetch-Site", "same-origin", "Origin", "http://"+addr), status: 200},
			{name: "cross-site", path: "/plain", header: mwtest.H("Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"), status: 403},
			{name: "cross-site trusted", path: "/plain", header: mwtest.H("Sec-Fetch-Site", "cross-site", "Origin", "https://partner.example"), status: 200},
			{name: "old browser same host", path: "/plain", header: mwtest.H("Origin", "http://"+addr), status: 200},
			{name: "old browser other host", path: "/plain", header: mwtest.H("Origin", "http://evil.example"), status: 403},
			{name: "skipped", path: "/hook", header: mwtest.H("Sec-Fetch-Site", "cross-site", "X-Signature", "s"), status: 200},
			{name: "not skipped", path: "/hook", header: mwtest.H("Sec-Fetch-Site", "cross-site"), status: 403},
		} {
			resp, body := mwtest.Do(t, client, "POST", "http://"+addr+tt.path, tt.header, nil)
			if resp.StatusCode != tt.status {
				t.Errorf("%s: %d %q, want %d", tt.name, resp.StatusCode, body, tt.status)
			}
			if tt.status == 403 && body != "cross-origin request refused" {
				t.Errorf("%s: body %q", tt.name, body)
			}
		}
	})
}

// Token mode with a cookie jar: a GET issues the cookie and the page carries the
// token; a POST without browser headers must echo it, in the header or the form.
func TestTokenMode(t *testing.T) {
	form := func(c *celeris.Context) error { return c.String(200, csrf.Token(c)) }
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(csrf.New(csrf.Config{Token: true}))
		s.GET("/form", form)
		s.POST("/submit", func(c *celeris.Context) error { return c.String(200, "accepted") })
	})
	base := "http://" + addr
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		jar, _ := cookiejar.New(nil)
		client.Jar = jar
		post := func(header http.Header, body string) (int, string) {
			t.Helper()
			if body != "" {
				if header == nil {
					header = http.Header{}
				}
				header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			resp, b := mwtest.Do(t, client, "POST", base+"/submit", header, strings.NewReader(body))
			return resp.StatusCode, b
		}
		if code, body := post(nil, ""); code != 403 || body != "missing or invalid CSRF token" {
			t.Errorf("no cookie, no token: %d %q", code, body)
		}
		resp, token := mwtest.Get(t, client, base+"/form", nil)
		if len(token) != 43 || resp.StatusCode != 200 {
			t.Fatalf("token %q", token)
		}
		u, _ := url.Parse(base)
		var cookie string
		for _, ck := range jar.Cookies(u) {
			if ck.Name == "csrf" {
				cookie = ck.Value
			}
		}
		if cookie != token {
			t.Fatalf("cookie %q, token %q", cookie, token)
		}
		if _, again := mwtest.Get(t, client, base+"/form", nil); again != token {
			t.Errorf("token changed: %q then %q", token, again)
		}
		for _, tt := range []struct {
			name   string
			header http.Header
			body   string
			status int
		}{
			{name: "header", header: mwtest.H("X-CSRF-Token", token), status: 200},
			{name: "form", body: "csrf_token=" + token, status: 200},
			{name: "missing", status: 403},
			{name: "wrong", header: mwtest.H("X-CSRF-Token", strings.Repeat("A", 43)), status: 403},
			{name: "short", header: mwtest.H("X-CSRF-Token", token[:10]), status: 403},
			{name: "browser same-origin needs none", header: mwtest.H("Sec-Fetch-Site", "same-origin"), status: 200},
			{name: "browser cross-site with token", header: mwtest.H("Sec-Fetch-Site", "cross-site", "X-CSRF-Token", token), status: 403},
		} {
			if code, body := post(tt.header, tt.body); code != tt.status {
				t.Errorf("%s: %d %q, want %d", tt.name, code, body, tt.status)
			}
		}
	})
	// A token without its cookie (another client's token) is refused.
	resp, token := mwtest.Get(t, mwtest.Client(t), base+"/form", nil)
	if resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	if resp, _ := mwtest.Do(t, mwtest.Client(t), "POST", base+"/submit", mwtest.H("X-CSRF-Token", token), nil); resp.StatusCode != 403 {
		t.Errorf("token without cookie: %d", resp.StatusCode)
	}
}

func TestTrustedOriginPanics(t *testing.T) {
	for _, o := range []string{"example.com", "https://example.com/", "https://example.com/path", "https://u@example.com", "https://"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%q accepted", o)
				}
			}()
			csrf.New(csrf.Config{TrustedOrigins: []string{o}})
		}()
	}
}

// Over TLS the token cookie is __Host-csrf: Secure, Path=/, no Domain
// (RFC 6265bis §4.1.3.2), and a POST echoing it passes.
func TestTokenCookieOverTLS(t *testing.T) {
	cert, err := selfcert.New("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := mwtest.StartConfig(t, celeris.Config{TLSAddr: "127.0.0.1:0",
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}}, func(s *celeris.Server) {
		s.Use(csrf.New(csrf.Config{Token: true}))
		s.GET("/form", func(c *celeris.Context) error { return c.String(200, csrf.Token(c)) })
		s.POST("/submit", func(c *celeris.Context) error { return c.String(200, "accepted") })
	})
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool()}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Jar: jar}
	base := "https://" + s.TLSAddr().String()
	resp, token := mwtest.Get(t, client, base+"/form", nil)
	sc := resp.Header.Get("Set-Cookie")
	if !strings.HasPrefix(sc, "__Host-csrf="+token+"; Path=/; HttpOnly; Secure") || strings.Contains(sc, "Domain") || resp.ProtoMajor != 2 {
		t.Fatalf("%s Set-Cookie %q", resp.Proto, sc)
	}
	if resp, body := mwtest.Do(t, client, "POST", base+"/submit", mwtest.H("X-CSRF-Token", token), nil); resp.StatusCode != 200 {
		t.Errorf("POST with token: %d %q", resp.StatusCode, body)
	}
}
