package celeris

import (
	"net/http"
	"testing"
)

// TestResponseKeepsContentType: a Content-Type the handler set before JSON,
// String or HTML is kept (as Gin and Echo do), e.g. application/problem+json.
func TestResponseKeepsContentType(t *testing.T) {
	t.Parallel()
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.GET("/json", func(c *Context) error {
			c.SetHeader("Content-Type", "application/problem+json")
			return c.JSON(422, map[string]string{"title": "bad"})
		})
		s.GET("/string", func(c *Context) error {
			c.SetHeader("Content-Type", "text/csv")
			return c.String(200, "a,b")
		})
		s.GET("/html", func(c *Context) error {
			c.SetHeader("Content-Type", "application/xhtml+xml")
			return c.HTML(200, "<p/>")
		})
		s.GET("/plain", func(c *Context) error { return c.JSON(200, 1) })
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		for path, want := range map[string]string{
			"/json": "application/problem+json", "/string": "text/csv",
			"/html": "application/xhtml+xml", "/plain": "application/json",
		} {
			resp, err := cl.Get("http://" + addr + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Values("Content-Type"); len(got) != 1 || got[0] != want {
				t.Errorf("%s: Content-Type %q, want %q", path, got, want)
			}
		}
	})
}
