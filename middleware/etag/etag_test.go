package etag_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/compress"
	"github.com/celeris-dev/celeris/middleware/etag"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
)

const page = "<h1>hello</h1>"

func TestETag(t *testing.T) {
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(etag.Default())
		s.GET("/page", func(c *celeris.Context) error {
			c.SetHeader("Cache-Control", "no-cache")
			return c.HTML(200, page)
		})
		s.POST("/page", func(c *celeris.Context) error { return c.HTML(200, page) })
		s.GET("/own", func(c *celeris.Context) error {
			c.SetHeader("ETag", `W/"v7"`)
			return c.String(200, "versioned")
		})
		s.GET("/created", func(c *celeris.Context) error { return c.String(201, "new") })
		s.GET("/stream", func(c *celeris.Context) error {
			w, err := c.Stream(200, "text/plain")
			if err != nil {
				return err
			}
			_, err = io.WriteString(w, "streamed")
			return err
		})
		s.GET("/weak", func(c *celeris.Context) error { return c.String(200, page) }, etag.New(etag.Config{Weak: true}))
	})
	strong := etag.Compute([]byte(page), false)
	weak := etag.Compute([]byte(page), true)
	if strong != `"e-`+strong[3:] || weak != "W/"+strong {
		t.Fatalf("Compute: %s %s", strong, weak)
	}
	tests := []struct {
		name, method, path, inm string
		status                  int
		tag, body               string
	}{
		{name: "computed", method: "GET", path: "/page", status: 200, tag: strong, body: page},
		{name: "match", method: "GET", path: "/page", inm: strong, status: 304, tag: strong},
		{name: "weak comparison", method: "GET", path: "/page", inm: "W/" + strong, status: 304, tag: strong},
		{name: "list", method: "GET", path: "/page", inm: `"a", W/"b",` + strong + `, "c"`, status: 304, tag: strong},
		{name: "star", method: "GET", path: "/page", inm: "*", status: 304, tag: strong},
		{name: "mismatch", method: "GET", path: "/page", inm: `"other"`, status: 200, tag: strong, body: page},
		{name: "malformed", method: "GET", path: "/page", inm: `bogus, ` + strong, status: 200, tag: strong, body: page},
		{name: "HEAD match", method: "HEAD", path: "/page", inm: strong, status: 304, tag: strong},
		{name: "HEAD", method: "HEAD", path: "/page", status: 200, tag: strong},
		{name: "POST untouched", method: "POST", path: "/page", inm: strong, status: 200, body: page},
		{name: "handler's tag kept", method: "GET", path: "/own", status: 200, tag: `W/"v7"`, body: "versioned"},
		{name: "handler's tag matched", method: "GET", path: "/own", inm: `"v7"`, status: 304, tag: `W/"v7"`},
		{name: "201 untouched", method: "GET", path: "/created", inm: "*", status: 201, body: "new"},
		{name: "stream untouched", method: "GET", path: "/stream", inm: "*", status: 200, body: "streamed"},
		{name: "weak config", method: "GET", path: "/weak", inm: strong, status: 304, tag: weak},
	}
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		for _, tt := range tests {
			var h http.Header
			if tt.inm != "" {
				h = mwtest.H("If-None-Match", tt.inm)
			}
			resp, body := mwtest.Do(t, client, tt.method, "http://"+addr+tt.path, h, nil)
			if resp.StatusCode != tt.status || resp.Header.Get("ETag") != tt.tag || body != tt.body {
				t.Errorf("%s: %d ETag %q body %q", tt.name, resp.StatusCode, resp.Header.Get("ETag"), body)
			}
			if resp.StatusCode == 304 {
				if ct := resp.Header.Get("Content-Type"); ct != "" {
					t.Errorf("%s: 304 with Content-Type %q", tt.name, ct)
				}
				if tt.path == "/page" && resp.Header.Get("Cache-Control") != "no-cache" {
					t.Errorf("%s: 304 lost Cache-Control", tt.name)
				}
			}
		}
	})
}

func TestNoneMatch(t *testing.T) {
	tests := []struct {
		inm, tag string
		want     bool
	}{
		{inm: `"a"`, tag: `"a"`, want: true},
		{inm: `W/"a"`, tag: `"a"`, want: true},
		{inm: `"a"`, tag: `W/"a"`, want: true},
		{inm: `"a"`, tag: `"b"`, want: false},
		{inm: `"b", "a"`, tag: `"a"`, want: true},
		{inm: ` "b" ,W/"a" `, tag: `"a"`, want: true},
		{inm: `"a,b"`, tag: `"a,b"`, want: true},
		{inm: `"a,b"`, tag: `"a"`, want: false},
		{inm: `*`, tag: `"x"`, want: true},
		{inm: ` * `, tag: `"x"`, want: true},
		{inm: `*`, tag: ``, want: false},
		{inm: `a`, tag: `"a"`, want: false},
		{inm: `"a`, tag: `"a"`, want: false},
		{inm: `W/`, tag: `"a"`, want: false},
		{inm: ``, tag: `"a"`, want: false},
		{inm: `""`, tag: `""`, want: true},
	}
	for _, tt := range tests {
		if got := etag.NoneMatch(tt.inm, tt.tag); got != tt.want {
			t.Errorf("NoneMatch(%q, %q) = %v, want %v", tt.inm, tt.tag, got, tt.want)
		}
	}
}

func FuzzNoneMatch(f *testing.F) {
	f.Add(`"a", W/"b"`, `"b"`)
	f.Fuzz(func(t *testing.T, inm, tag string) {
		etag.NoneMatch(inm, tag) // must not panic
	})
}

// TestWithCompress: etag outside compress tags the gzipped bytes (nested captures)
// and still answers 304; compress outside etag weakens etag's strong tag.
func TestWithCompress(t *testing.T) {
	body := strings.Repeat("compressible text ", 100)
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		h := func(c *celeris.Context) error { return c.String(200, body) }
		s.GET("/etag-outside", h, etag.Default(), compress.Default())
		s.GET("/compress-outside", h, compress.Default(), etag.Default())
	})
	gz := mwtest.H("Accept-Encoding", "gzip")
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		url := "http://" + addr
		resp, got := mwtest.Get(t, client, url+"/etag-outside", gz)
		if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("ETag") != etag.Compute([]byte(got), false) {
			t.Fatalf("etag outside: %v", resp.Header)
		}
		tag := resp.Header.Get("ETag")
		if resp, _ := mwtest.Get(t, client, url+"/etag-outside", mwtest.H("Accept-Encoding", "gzip", "If-None-Match", tag)); resp.StatusCode != 304 {
			t.Errorf("etag outside, revalidation: %d", resp.StatusCode)
		}
		if resp, _ := mwtest.Get(t, client, url+"/etag-outside", mwtest.H("If-None-Match", tag)); resp.StatusCode != 200 {
			t.Errorf("identity request matched the gzip tag: %d", resp.StatusCode)
		}

		resp, _ = mwtest.Get(t, client, url+"/compress-outside", gz)
		want := "W/" + etag.Compute([]byte(body), false)
		if resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("ETag") != want {
			t.Fatalf("compress outside: %v, want ETag %s", resp.Header, want)
		}
		if resp, _ := mwtest.Get(t, client, url+"/compress-outside", mwtest.H("Accept-Encoding", "gzip", "If-None-Match", want)); resp.StatusCode != 304 || resp.Header.Get("ETag") != want {
			t.Errorf("compress outside, revalidation: %d ETag %q", resp.StatusCode, resp.Header.Get("ETag"))
		}
	})
}
