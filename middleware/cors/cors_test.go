package cors_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/cors"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

type want struct {
	status      int
	origin      string // Access-Control-Allow-Origin
	credentials string
	methods     string
	headers     string
	maxAge      string
	expose      string
	vary        string // joined Vary values
	handler     bool   // the route's handler ran
}

func TestCORS(t *testing.T) {
	var calls atomic.Int64
	h := func(c *celeris.Context) error {
		calls.Add(1)
		return c.String(200, "ok")
	}
	_, addrDefault := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(cors.Default())
		s.GET("/items", h)
	})
	_, addrStrict := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(cors.New(cors.Config{
			AllowOrigins:     []string{"https://app.example.com", "https://*.trusted.org"},
			AllowMethods:     []string{"GET", "POST"},
			AllowHeaders:     []string{"Content-Type", "X-Token"},
			ExposeHeaders:    []string{"X-Total", "X-Page"},
			AllowCredentials: true,
			MaxAge:           600,
		}))
		s.GET("/items", h)
	})
	_, addrFunc := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(cors.New(cors.Config{
			AllowOriginFunc: func(c *celeris.Context, origin string) bool { return strings.HasSuffix(origin, ".local") },
			MaxAge:          -1,
		}))
		s.GET("/items", h)
	})
	const (
		acrm  = "Access-Control-Request-Method"
		acrh  = "Access-Control-Request-Headers"
		pvary = "Access-Control-Request-Method, Access-Control-Request-Headers"
	)
	tests := []struct {
		name, addr, method, path string
		header                   http.Header
		want                     want
	}{
		{name: "default no origin", addr: addrDefault, method: "GET", path: "/items",
			want: want{status: 200, handler: true}},
		{name: "default simple", addr: addrDefault, method: "GET", path: "/items",
			header: mwtest.H("Origin", "https://a.com"),
			want:   want{status: 200, origin: "*", handler: true}},
		{name: "default preflight on GET-only route", addr: addrDefault, method: "OPTIONS", path: "/items",
			header: mwtest.H("Origin", "https://a.com", acrm, "PUT", acrh, "x-a, content-type"),
			want: want{status: 204, origin: "*", methods: "GET, HEAD, PUT, PATCH, POST, DELETE",
				headers: "x-a, content-type", vary: pvary}},
		{name: "default preflight on unknown path", addr: addrDefault, method: "OPTIONS", path: "/nowhere",
			header: mwtest.H("Origin", "https://a.com", acrm, "GET"),
			want:   want{status: 204, origin: "*", methods: "GET, HEAD, PUT, PATCH, POST, DELETE", vary: pvary}},
		{name: "default preflight method not allowed", addr: addrDefault, method: "OPTIONS", path: "/items",
			header: mwtest.H("Origin", "https://a.com", acrm, "PURGE"),
			want:   want{status: 204, vary: pvary}},
		{name: "OPTIONS without request method is not a preflight", addr: addrDefault, method: "OPTIONS", path: "/items",
			header: mwtest.H("Origin", "https://a.com"),
			want:   want{status: 204, origin: "*"}}, // the server's own OPTIONS answer

		{name: "strict no origin", addr: addrStrict, method: "GET", path: "/items",
			want: want{status: 200, vary: "Origin", handler: true}},
		{name: "strict allowed", addr: addrStrict, method: "GET", path: "/items",
			header: mwtest.H("Origin", "https://app.example.com"),
			want: want{status: 200, origin: "https://app.example.com", credentials: "true",
				expose: "X-Total, X-Page", vary: "Origin", handler: true}},
		{name: "strict allowed case-insensitive", addr: addrStrict, method: "GET", path: "/items",
			header: mwtest.H("Origin", "HTTPS://APP.example.com"),
			want: want{status: 200, origin: "HTTPS://APP.example.com", credentials: "true",
				expose: "X-Total, X-Page", vary: "Origin", handler: true}},
		{name: "strict pattern", addr: addrStrict, method: "GET", path: "/items",
			header: mwtest.H("Origin", "https://api.trusted.org"),
			want: want{status: 200, origin: "https://api.trusted.org", credentials: "true",
				expose: "X-Total, X-Page", vary: "Origin", handler: true}},
		{name: "strict pattern needs a subdomain", addr: addrStrict, method: "GET", path: "/items",
			header: mwtest.H("Origin", "https://.trusted.org"),
			want:   want{status: 200, vary: "Origin", handler: true}},
		{name: "strict pattern other domain", addr: addrStrict, method: "GET", path: "/items",
			header: mwtest.H("Origin", "https://trusted.org.evil.com"),
			want:   want{status: 200, vary: "Origin", handler: true}},
		{name: "strict disallowed", addr: addrStrict, method: "GET", path: "/items",
			header: mwtest.H("Origin", "https://evil.com"),
			want:   want{status: 200, vary: "Origin", handler: true}},
		{name: "strict preflight", addr: addrStrict, method: "OPTIONS", path: "/items",
			header: mwtest.H("Origin", "https://app.example.com", acrm, "POST", acrh, "content-type,x-token"),
			want: want{status: 204, origin: "https://app.example.com", credentials: "true", methods: "GET, POST",
				headers: "Content-Type, X-Token", maxAge: "600", vary: "Origin, " + pvary}},
		{name: "strict preflight header not allowed", addr: addrStrict, method: "OPTIONS", path: "/items",
			header: mwtest.H("Origin", "https://app.example.com", acrm, "POST", acrh, "x-other"),
			want:   want{status: 204, vary: "Origin, " + pvary}},
		{name: "strict preflight method not allowed", addr: addrStrict, method: "OPTIONS", path: "/items",
			header: mwtest.H("Origin", "https://app.example.com", acrm, "DELETE"),
			want:   want{status: 204, vary: "Origin, " + pvary}},
		{name: "strict preflight disallowed origin", addr: addrStrict, method: "OPTIONS", path: "/items",
			header: mwtest.H("Origin", "https://evil.com", acrm, "GET"),
			want:   want{status: 204, vary: "Origin, " + pvary}},

		{name: "func allowed", addr: addrFunc, method: "GET", path: "/items",
			header: mwtest.H("Origin", "http://dev.local"),
			want:   want{status: 200, origin: "http://dev.local", vary: "Origin", handler: true}},
		{name: "func refused", addr: addrFunc, method: "GET", path: "/items",
			header: mwtest.H("Origin", "http://dev.remote"),
			want:   want{status: 200, vary: "Origin", handler: true}},
		{name: "func preflight max-age 0", addr: addrFunc, method: "OPTIONS", path: "/items",
			header: mwtest.H("Origin", "http://dev.local", acrm, "GET"),
			want: want{status: 204, origin: "http://dev.local", methods: "GET, HEAD, PUT, PATCH, POST, DELETE",
				maxAge: "0", vary: "Origin, " + pvary}},
	}
	mwtest.Run(t, addrDefault, func(t *testing.T, client *http.Client) {
		for _, tt := range tests {
			before := calls.Load()
			resp, _ := mwtest.Do(t, client, tt.method, "http://"+tt.addr+tt.path, tt.header, nil)
			got := want{
				status:      resp.StatusCode,
				origin:      resp.Header.Get("Access-Control-Allow-Origin"),
				credentials: resp.Header.Get("Access-Control-Allow-Credentials"),
				methods:     resp.Header.Get("Access-Control-Allow-Methods"),
				headers:     resp.Header.Get("Access-Control-Allow-Headers"),
				maxAge:      resp.Header.Get("Access-Control-Max-Age"),
				expose:      resp.Header.Get("Access-Control-Expose-Headers"),
				vary:        strings.Join(resp.Header.Values("Vary"), ", "),
				handler:     calls.Load() != before,
			}
			if got != tt.want {
				t.Errorf("%s:\n got %+v\nwant %+v", tt.name, got, tt.want)
			}
		}
	})
}

func TestMalformedPattern(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "https://*.*.com") {
			t.Fatalf("panic %v", p)
		}
	}()
	cors.New(cors.Config{AllowOrigins: []string{"https://*.*.com"}})
}
