package csrf_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/csrf"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/secure"
)

// A page rendered through celeris.HTMLTemplates calls {{cspNonce}} and
// {{csrfField}} without the handler passing them: the nonce is the one of the
// request's CSP header, the field carries the token of the request's cookie,
// and the form posted back with it passes token mode (Go's client sends neither
// Origin nor Sec-Fetch-Site). Over h1 and h2c.
func TestTemplateFuncs(t *testing.T) {
	files := fstest.MapFS{"page.html": {Data: []byte(
		`<script nonce="{{cspNonce}}">go()</script><form method="post">{{csrfField}}<i>{{.}}</i></form>`)}}
	cfg := celeris.Config{Renderer: celeris.MustParseHTMLTemplates(files, "*.html")}
	_, addr := mwtest.StartConfig(t, cfg, func(s *celeris.Server) {
		s.Use(secure.New(secure.Config{ContentSecurityPolicy: "script-src 'nonce-{nonce}'"}),
			csrf.New(csrf.Config{Token: true, FormField: "tok"}))
		s.GET("/page", func(c *celeris.Context) error { return c.Render(200, "page.html", "<data>") })
		s.POST("/page", func(c *celeris.Context) error { return c.String(200, "posted") })
	})
	page := regexp.MustCompile(`^<script nonce="([A-Za-z0-9_-]{22})">go\(\)</script><form method="post">` +
		`<input type="hidden" name="tok" value="([A-Za-z0-9_-]{43})"><i>&lt;data&gt;</i></form>$`)
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for range 3 { // a clone reused keeps reading the request it renders
			resp, body := mwtest.Get(t, client, "http://"+addr+"/page", nil)
			m := page.FindStringSubmatch(body)
			if resp.StatusCode != 200 || m == nil {
				t.Fatalf("%d %q", resp.StatusCode, body)
			}
			if csp := resp.Header.Get("Content-Security-Policy"); csp != "script-src 'nonce-"+m[1]+"'" {
				t.Errorf("page nonce %q, CSP %q", m[1], csp)
			}
			var cookie string
			for _, ck := range resp.Cookies() {
				if ck.Name == "csrf" {
					cookie = ck.Value
				}
			}
			if cookie != m[2] {
				t.Errorf("field token %q, cookie %q", m[2], cookie)
			}
			h := mwtest.H("Content-Type", "application/x-www-form-urlencoded", "Cookie", "csrf="+cookie)
			if resp, body := mwtest.Do(t, client, "POST", "http://"+addr+"/page", h, strings.NewReader("tok="+m[2])); resp.StatusCode != 200 {
				t.Errorf("form posted back: %d %q", resp.StatusCode, body)
			}
			if resp, _ := mwtest.Do(t, client, "POST", "http://"+addr+"/page", h, strings.NewReader("tok=x")); resp.StatusCode != 403 {
				t.Errorf("wrong token: %d", resp.StatusCode)
			}
		}
	})
}
