package keyauth_test

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/keyauth"
)

func TestKeyAuth(t *testing.T) {
	whoami := func(c *celeris.Context) error { return c.String(200, "hello "+keyauth.Name(c)) }
	keys := map[string]string{"k-alice-0123456789": "alice", "k-bob": "bob"}
	quiet := celeris.Config{Logger: slog.New(slog.DiscardHandler)}
	_, addr := mwtest.StartConfig(t, quiet, func(s *celeris.Server) {
		s.GET("/header", whoami, keyauth.New(keyauth.Config{Keys: keys}))
		s.GET("/bearer", whoami, keyauth.New(keyauth.Config{Keys: keys, Lookup: "auth:Bearer", Realm: "api"}))
		s.GET("/query", whoami, keyauth.New(keyauth.Config{Keys: keys, Lookup: "query:api_key"}))
		s.GET("/cookie", whoami, keyauth.New(keyauth.Config{Keys: keys, Lookup: "cookie:key"}))
		s.GET("/skip", whoami, keyauth.New(keyauth.Config{Keys: keys,
			Skip: func(c *celeris.Context) bool { return c.Header("X-Internal") == "1" }}))
		s.GET("/validator", whoami, keyauth.New(keyauth.Config{
			Validator: func(c *celeris.Context, key string) (string, bool, error) {
				if key == "broken" {
					return "", false, errors.New("key store down")
				}
				if key == "teapot" {
					return "", false, celeris.NewHTTPError(418, "short and stout")
				}
				return "v:" + key, strings.HasPrefix(key, "good"), nil
			},
		}))
	})
	// RFC 9110 §11.6.1: every 401 carries WWW-Authenticate.
	const hdrChallenge = `ApiKey realm="Restricted", in="header", name="X-API-Key"`
	tests := []struct {
		name, path string
		header     http.Header
		status     int
		body       string
		challenge  string
	}{
		{name: "header ok", path: "/header", header: mwtest.H("X-API-Key", "k-alice-0123456789"), status: 200, body: "hello alice"},
		{name: "header second key", path: "/header", header: mwtest.H("X-API-Key", "k-bob"), status: 200, body: "hello bob"},
		{name: "header prefix of key", path: "/header", header: mwtest.H("X-API-Key", "k-alice"), status: 401, body: "invalid API key", challenge: hdrChallenge},
		{name: "header wrong", path: "/header", header: mwtest.H("X-API-Key", "nope"), status: 401, body: "invalid API key", challenge: hdrChallenge},
		{name: "header missing", path: "/header", status: 401, body: "missing API key", challenge: hdrChallenge},
		{name: "header huge", path: "/header", header: mwtest.H("X-API-Key", strings.Repeat("k", 5000)), status: 401, body: "missing API key", challenge: hdrChallenge},
		{name: "bearer ok", path: "/bearer", header: mwtest.H("Authorization", "Bearer k-bob"), status: 200, body: "hello bob"},
		{name: "bearer scheme case", path: "/bearer", header: mwtest.H("Authorization", "bEARER   k-bob"), status: 200, body: "hello bob"},
		{name: "bearer wrong", path: "/bearer", header: mwtest.H("Authorization", "Bearer k-eve"), status: 401,
			challenge: `Bearer realm="api", error="invalid_token"`},
		{name: "bearer missing", path: "/bearer", status: 401, challenge: `Bearer realm="api"`},
		{name: "bearer other scheme", path: "/bearer", header: mwtest.H("Authorization", "Basic k-bob"), status: 401, challenge: `Bearer realm="api"`},
		{name: "bearer glued", path: "/bearer", header: mwtest.H("Authorization", "Bearerk-bob"), status: 401, challenge: `Bearer realm="api"`},
		{name: "query ok", path: "/query?api_key=k-bob", status: 200, body: "hello bob"},
		{name: "query wrong", path: "/query?api_key=x", status: 401, challenge: `ApiKey realm="Restricted", in="query", name="api_key"`},
		{name: "cookie ok", path: "/cookie", header: mwtest.H("Cookie", "a=b; key=k-bob"), status: 200, body: "hello bob"},
		{name: "cookie missing", path: "/cookie", header: mwtest.H("Cookie", "a=b"), status: 401, challenge: `ApiKey realm="Restricted", in="cookie", name="key"`},
		{name: "skipped", path: "/skip", header: mwtest.H("X-Internal", "1"), status: 200, body: "hello "},
		{name: "not skipped", path: "/skip", status: 401, challenge: hdrChallenge},
		{name: "validator ok", path: "/validator", header: mwtest.H("X-API-Key", "good1"), status: 200, body: "hello v:good1"},
		{name: "validator refuses", path: "/validator", header: mwtest.H("X-API-Key", "bad"), status: 401, challenge: hdrChallenge},
		{name: "validator error", path: "/validator", header: mwtest.H("X-API-Key", "broken"), status: 500},
		{name: "validator http error", path: "/validator", header: mwtest.H("X-API-Key", "teapot"), status: 418, body: "short and stout"},
	}
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, tt := range tests {
			resp, body := mwtest.Get(t, client, "http://"+addr+tt.path, tt.header)
			if resp.StatusCode != tt.status {
				t.Errorf("%s: status %d, want %d (%q)", tt.name, resp.StatusCode, tt.status, body)
			}
			if tt.body != "" && body != tt.body {
				t.Errorf("%s: body %q, want %q", tt.name, body, tt.body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("%s: WWW-Authenticate %q, want %q", tt.name, got, tt.challenge)
			}
		}
	})
}

func TestAuthToken(t *testing.T) {
	for _, tt := range []struct{ header, scheme, want string }{
		{header: "Bearer abc", scheme: "Bearer", want: "abc"},
		{header: "bearer  abc ", scheme: "Bearer", want: "abc"},
		{header: "Bearer", scheme: "Bearer"},
		{header: "Bearer ", scheme: "Bearer"},
		{header: "Bearerabc", scheme: "Bearer"},
		{header: "Basic abc", scheme: "Bearer"},
		{header: "", scheme: "Bearer"},
	} {
		if got := keyauth.AuthToken(tt.header, tt.scheme); got != tt.want {
			t.Errorf("AuthToken(%q, %q) = %q, want %q", tt.header, tt.scheme, got, tt.want)
		}
	}
}

func TestNewPanics(t *testing.T) {
	for _, cfg := range []keyauth.Config{
		{},
		{Keys: map[string]string{"a": "b"}, Lookup: "header"},
		{Keys: map[string]string{"a": "b"}, Lookup: "form:x"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("New(%+v) did not panic", cfg)
				}
			}()
			keyauth.New(cfg)
		}()
	}
}

func FuzzAuthToken(f *testing.F) {
	f.Add("Bearer abc", "Bearer")
	f.Add("bearer", "Bearer")
	f.Add("Basic  x ", "Basic")
	f.Fuzz(func(t *testing.T, header, scheme string) {
		tok := keyauth.AuthToken(header, scheme)
		if tok == "" {
			return
		}
		if !strings.Contains(header, tok) || strings.HasPrefix(tok, " ") || strings.HasSuffix(tok, " ") {
			t.Fatalf("AuthToken(%q, %q) = %q", header, scheme, tok)
		}
		if !strings.EqualFold(header[:len(scheme)], scheme) || header[len(scheme)] != ' ' {
			t.Fatalf("AuthToken(%q, %q) = %q for another scheme", header, scheme, tok)
		}
	})
}
