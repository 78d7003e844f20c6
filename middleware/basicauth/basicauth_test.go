package basicauth_test

import (
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/basicauth"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

func basic(userPass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(userPass))
}

func TestBasicAuth(t *testing.T) {
	whoami := func(c *celeris.Context) error { return c.String(200, "hello "+basicauth.User(c)) }
	quiet := celeris.Config{Logger: slog.New(slog.DiscardHandler)}
	_, addr := mwtest.StartConfig(t, quiet, func(s *celeris.Server) {
		s.GET("/users", whoami, basicauth.New(basicauth.Config{
			Users: map[string]string{"alice": "s3cret", "bob": "pa:ss:word", "ünï": "çödé"},
		}))
		s.GET("/validator", whoami, basicauth.New(basicauth.Config{
			Realm: `Admin "zone" \ 1`,
			Validator: func(user, password string, c *celeris.Context) (bool, error) {
				if user == "broken" {
					return false, errors.New("directory down")
				}
				return user == "admin" && password == c.Header("X-Expected"), nil
			},
		}))
	})
	const challenge = `Basic realm="Restricted", charset="UTF-8"`
	tests := []struct {
		name, path, auth string
		header           http.Header
		status           int
		body             string
		challenge        string
	}{
		{name: "ok", path: "/users", auth: basic("alice:s3cret"), status: 200, body: "hello alice"},
		{name: "colons in password", path: "/users", auth: basic("bob:pa:ss:word"), status: 200, body: "hello bob"},
		{name: "utf-8", path: "/users", auth: basic("ünï:çödé"), status: 200, body: "hello ünï"},
		{name: "scheme case-insensitive", path: "/users", auth: "bAsIc " + base64.StdEncoding.EncodeToString([]byte("alice:s3cret")), status: 200, body: "hello alice"},
		{name: "wrong password", path: "/users", auth: basic("alice:wrong"), status: 401, challenge: challenge},
		{name: "other user's password", path: "/users", auth: basic("alice:pa:ss:word"), status: 401, challenge: challenge},
		{name: "unknown user", path: "/users", auth: basic("eve:s3cret"), status: 401, challenge: challenge},
		{name: "missing", path: "/users", status: 401, challenge: challenge},
		{name: "no colon", path: "/users", auth: basic("alices3cret"), status: 401, challenge: challenge},
		{name: "bad base64", path: "/users", auth: "Basic !!!notbase64", status: 401, challenge: challenge},
		{name: "scheme only", path: "/users", auth: "Basic", status: 401, challenge: challenge},
		{name: "bearer", path: "/users", auth: "Bearer abc", status: 401, challenge: challenge},
		{name: "huge", path: "/users", auth: "Basic " + strings.Repeat("QUFB", 2000), status: 401, challenge: challenge},
		{name: "validator ok", path: "/validator", auth: basic("admin:x"), header: mwtest.H("X-Expected", "x"), status: 200, body: "hello admin"},
		{name: "validator refuses", path: "/validator", auth: basic("admin:y"), header: mwtest.H("X-Expected", "x"), status: 401,
			challenge: `Basic realm="Admin \"zone\" \\ 1", charset="UTF-8"`},
		{name: "validator error", path: "/validator", auth: basic("broken:x"), status: 500},
	}
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, tt := range tests {
			h := tt.header
			if h == nil {
				h = http.Header{}
			}
			if tt.auth != "" {
				h.Set("Authorization", tt.auth)
			}
			resp, body := mwtest.Get(t, client, "http://"+addr+tt.path, h)
			if resp.StatusCode != tt.status || (tt.body != "" && body != tt.body) || resp.Header.Get("WWW-Authenticate") != tt.challenge {
				t.Errorf("%s: %d %q %q", tt.name, resp.StatusCode, body, resp.Header.Get("WWW-Authenticate"))
			}
		}
	})
}

func TestParse(t *testing.T) {
	tests := []struct {
		header, user, pass string
		ok                 bool
	}{
		{header: basic("a:b"), user: "a", pass: "b", ok: true},
		{header: basic(":"), user: "", pass: "", ok: true},
		{header: basic("a:"), user: "a", pass: "", ok: true},
		{header: "basic   " + base64.StdEncoding.EncodeToString([]byte("a:b")), user: "a", pass: "b", ok: true},
		{header: basic("ab")},
		{header: "Basic YQ"}, // missing padding
		{header: "Digest x"},
		{header: ""},
		{header: "B"},
	}
	for _, tt := range tests {
		u, p, ok := basicauth.Parse(tt.header)
		if u != tt.user || p != tt.pass || ok != tt.ok {
			t.Errorf("Parse(%q) = %q, %q, %v", tt.header, u, p, ok)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(basic("a:b"))
	f.Add("Basic ")
	f.Add("basic ====")
	f.Fuzz(func(t *testing.T, h string) {
		u, p, ok := basicauth.Parse(h)
		if ok && strings.Contains(u, ":") {
			t.Fatalf("user %q holds a colon", u)
		}
		if !ok && (u != "" || p != "") {
			t.Fatal("values without ok")
		}
	})
}

func TestNeedsCredentials(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	basicauth.New(basicauth.Config{})
}
