package auth_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/auth"
	"github.com/celeris-dev/celeris/middleware/basicauth"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/keyauth"
	"github.com/celeris-dev/celeris/middleware/session"
)

func whoami(c *celeris.Context) error {
	p := auth.From(c)
	return c.String(200, p.Kind+" "+p.ID+" "+strings.Join(p.Scopes, ","))
}

// One "session or Basic or API key" check: each kind yields its Principal,
// RequireScopes and Require work for every kind, a wrong credential answers its
// own challenge unless another kind accepts the request, and no credential
// answers 401 with every kind's challenge.
func TestAnyOverSockets(t *testing.T) {
	keyScopes := map[string][]string{"reader": {"read"}, "writer": {"read", "write"}}
	userScopes := map[string][]string{"bob": {"read"}, "root": {"read", "write", "admin"}}
	isAdmin := func(_ *celeris.Context, p *auth.Principal) error {
		if !p.HasScope("admin") {
			return errors.New("not an admin")
		}
		return nil
	}
	store := session.NewMemoryStore()
	quiet := celeris.Config{Logger: slog.New(slog.DiscardHandler)}
	_, addr := mwtest.StartConfig(t, quiet, func(s *celeris.Server) {
		s.Use(session.New(session.Config{Store: store}))
		s.POST("/login", func(c *celeris.Context) error {
			sess, err := session.Get(c)
			if err != nil {
				return err
			}
			sess.Regenerate()
			sess.SetUser(c.Query("user"), strings.Fields(c.Query("scopes"))...)
			return c.NoContent(204)
		})
		api := s.Group("/api", auth.Any(
			session.Authenticator(),
			basicauth.Authenticator(basicauth.Config{Users: map[string]string{"bob": "pw", "root": "toor"}},
				func(u string) []string { return userScopes[u] }),
			keyauth.Authenticator(keyauth.Config{Keys: map[string]string{"k-read": "reader", "k-write": "writer"}, Lookup: "auth:Bearer", Realm: "api"},
				func(name string) []string { return keyScopes[name] }),
		))
		api.GET("/me", whoami)
		api.POST("/write", whoami, auth.RequireScopes("write"))
		api.DELETE("/admin", whoami, auth.Require(isAdmin))
		s.GET("/scoped-alone", whoami, auth.RequireScopes("read"))
	})
	base := "http://" + addr
	basic := func(u, p string) http.Header {
		r, _ := http.NewRequest("GET", "/", nil)
		r.SetBasicAuth(u, p)
		return r.Header
	}
	bearer := func(k string) http.Header { return mwtest.H("Authorization", "Bearer "+k) }
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, tt := range []struct {
			name, method, path string
			header             http.Header
			status             int
			body               string
			challenges         []string
		}{
			{name: "none", method: "GET", path: "/api/me", status: 401,
				challenges: []string{`Basic realm="Restricted", charset="UTF-8"`, `Bearer realm="api"`}},
			{name: "wrong key", method: "GET", path: "/api/me", header: bearer("k-nope"), status: 401,
				challenges: []string{`Bearer realm="api", error="invalid_token"`}},
			{name: "wrong password", method: "GET", path: "/api/me", header: basic("bob", "nope"), status: 401,
				challenges: []string{`Basic realm="Restricted", charset="UTF-8"`}},
			{name: "key", method: "GET", path: "/api/me", header: bearer("k-read"), status: 200, body: "apikey reader read"},
			{name: "key without scope", method: "POST", path: "/api/write", header: bearer("k-read"), status: 403},
			{name: "key with scope", method: "POST", path: "/api/write", header: bearer("k-write"), status: 200, body: "apikey writer read,write"},
			{name: "basic", method: "GET", path: "/api/me", header: basic("bob", "pw"), status: 200, body: "basic bob read"},
			{name: "basic not admin", method: "DELETE", path: "/api/admin", header: basic("bob", "pw"), status: 403},
			{name: "basic admin", method: "DELETE", path: "/api/admin", header: basic("root", "toor"), status: 200, body: "basic root read,write,admin"},
			{name: "scopes without Any", method: "GET", path: "/scoped-alone", header: bearer("k-read"), status: 401},
		} {
			resp, body := mwtest.Do(t, client, tt.method, base+tt.path, tt.header, nil)
			if resp.StatusCode != tt.status || (tt.body != "" && body != tt.body) {
				t.Errorf("%s: %d %q, want %d %q", tt.name, resp.StatusCode, body, tt.status, tt.body)
			}
			if got := resp.Header.Values("WWW-Authenticate"); tt.challenges != nil && !slices.Equal(got, tt.challenges) {
				t.Errorf("%s: WWW-Authenticate %q, want %q", tt.name, got, tt.challenges)
			}
			if tt.status == 403 && resp.Header.Get("WWW-Authenticate") != "" {
				t.Errorf("%s: a 403 for a non-JWT principal has a Bearer challenge", tt.name)
			}
		}
		// A session signed in: its user is the principal, and a wrong API key
		// beside it does not refuse the request.
		client, _ = sessionClient(client)
		if resp, _ := mwtest.Do(t, client, "POST", base+"/login?user=carol&scopes=read+write", nil, nil); resp.StatusCode != 204 {
			t.Fatalf("login: %d", resp.StatusCode)
		}
		if _, body := mwtest.Get(t, client, base+"/api/me", nil); body != "session carol read,write" {
			t.Errorf("session: %q", body)
		}
		if resp, body := mwtest.Do(t, client, "POST", base+"/api/write", bearer("k-nope"), nil); resp.StatusCode != 200 || body != "session carol read,write" {
			t.Errorf("session beside a wrong key: %d %q", resp.StatusCode, body)
		}
		if resp, _ := mwtest.Do(t, client, "DELETE", base+"/api/admin", nil, nil); resp.StatusCode != 403 {
			t.Errorf("session admin: %d", resp.StatusCode)
		}
	})
}

func sessionClient(c *http.Client) (*http.Client, error) {
	jar, err := cookiejar.New(nil)
	c.Jar = jar
	return c, err
}
