package celeris

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"
)

func cookieRoutes(s *Server) {
	s.GET("/login", func(c *Context) error {
		err := c.SetCookie(&http.Cookie{
			Name: "session", Value: "abc123", Path: "/", Domain: "example.com",
			Expires:  time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
			MaxAge:   3600,
			Secure:   true,
			HttpOnly: true,
			SameSite: http.SameSiteStrictMode, Partitioned: true,
		})
		if err != nil {
			return err
		}
		if err := c.SetCookie(&http.Cookie{Name: "theme", Value: "dark", Path: "/"}); err != nil {
			return err
		}
		return c.String(200, "ok")
	})
	s.GET("/bad", func(c *Context) error {
		var errs []string
		for _, ck := range []*http.Cookie{
			nil,
			{Name: "bad name", Value: "v"},
			{Name: "n", Value: "semi;colon"},
			{Name: "n", Value: "v", Partitioned: true},
			{Name: "n", Value: "v", Path: "/a;b"},
		} {
			if err := c.SetCookie(ck); err != nil {
				errs = append(errs, "err")
			}
		}
		return c.String(200, strings.Join(errs, ","))
	})
	s.GET("/whoami", func(c *Context) error {
		theme, err := c.Cookie("theme")
		if err != nil {
			return NewHTTPError(400, err.Error())
		}
		var names []string
		for _, ck := range c.Cookies() {
			names = append(names, ck.Name+"="+ck.Value)
		}
		sort.Strings(names)
		_, missing := c.Cookie("missing")
		return c.String(200, theme+"|"+strings.Join(names, ",")+"|"+missing.Error())
	})
}

func TestCookiesRoundTrip(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, cookieRoutes)
	client := adaptClient(t)
	resp, body := mustGet(t, client, "http://"+addr+"/login")
	if resp.StatusCode != 200 || body != "ok" {
		t.Fatalf("login: %d %q", resp.StatusCode, body)
	}
	sc := resp.Header.Values("Set-Cookie")
	if len(sc) != 2 {
		t.Fatalf("Set-Cookie fields: %q", sc)
	}
	want := "session=abc123; Path=/; Domain=example.com; Expires=Wed, 02 Jan 2030 03:04:05 GMT; " +
		"Max-Age=3600; HttpOnly; Secure; SameSite=Strict; Partitioned"
	if sc[0] != want {
		t.Errorf("Set-Cookie\n got %q\nwant %q", sc[0], want)
	}
	if sc[1] != "theme=dark; Path=/" {
		t.Errorf("Set-Cookie %q", sc[1])
	}
	// What the client parses back is what was set.
	cks := resp.Cookies()
	if len(cks) != 2 || cks[0].Name != "session" || !cks[0].Secure || !cks[0].HttpOnly ||
		cks[0].SameSite != http.SameSiteStrictMode || cks[0].MaxAge != 3600 || !cks[0].Partitioned {
		t.Errorf("parsed back: %+v", cks[0])
	}

	// A cookie jar sends theme back (session is for example.com only).
	jar, _ := cookiejar.New(nil)
	client.Jar = jar
	if _, err := client.Get("http://" + addr + "/login"); err != nil {
		t.Fatal(err)
	}
	resp, body = mustGet(t, client, "http://"+addr+"/whoami")
	if resp.StatusCode != 200 || body != "dark|theme=dark|"+http.ErrNoCookie.Error() {
		t.Errorf("whoami: %d %q", resp.StatusCode, body)
	}

	_, body = mustGet(t, adaptClient(t), "http://"+addr+"/bad")
	if body != "err,err,err,err,err" {
		t.Errorf("invalid cookies: %q", body)
	}
}

func TestCookieParsing(t *testing.T) {
	s := New(Config{})
	cookieRoutes(s)
	tests := []struct {
		name   string
		cookie []string
		status int
		body   string
	}{
		{name: "quoted and spaced", cookie: []string{` a=1 ;theme="light";  b=2`}, status: 200,
			body: "light|a=1,b=2,theme=light|" + http.ErrNoCookie.Error()},
		{name: "split fields (HTTP/2 style)", cookie: []string{"a=1", "theme=blue"}, status: 200,
			body: "blue|a=1,theme=blue|" + http.ErrNoCookie.Error()},
		{name: "malformed pairs skipped", cookie: []string{`theme=bad\value; theme=ok; bad name=1; =x`}, status: 200,
			body: "ok|theme=ok|" + http.ErrNoCookie.Error()},
		{name: "absent", cookie: []string{"other=1"}, status: 400, body: http.ErrNoCookie.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/whoami", nil)
			for _, v := range tt.cookie {
				req.Header.Add("Cookie", v)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != tt.status || rec.Body.String() != tt.body {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tt.status, tt.body)
			}
		})
	}
}
