package celeris

import (
	"encoding/xml"
	"html/template"
	"net/http"
	"testing"
)

type todoItem struct {
	XMLName xml.Name `xml:"todo" json:"-"`
	ID      int      `xml:"id" json:"id"`
	Title   string   `xml:"title" json:"title"`
}

func TestRenderXMLNegotiate(t *testing.T) {
	t.Parallel()
	tpl := template.Must(template.New("page").Parse(`<h1>{{.Title}}</h1>`))
	_, addr := startServer(t, Config{Renderer: HTMLTemplates{T: tpl}}, func(s *Server) {
		s.GET("/page", func(c *Context) error { return c.Render(200, "page", todoItem{Title: "<b>"}) })
		s.GET("/missing", func(c *Context) error { return c.Render(200, "nope", nil) })
		s.GET("/xml", func(c *Context) error { return c.XML(201, todoItem{ID: 1, Title: "a"}) })
		s.GET("/neg", func(c *Context) error {
			return c.Negotiate(200, map[string]any{
				"application/json": todoItem{ID: 1, Title: "a"},
				"application/xml":  todoItem{ID: 1, Title: "a"},
				"text/plain":       "todo 1: a",
			})
		})
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		get := func(path, accept string) (int, string, string) {
			req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, resp.Header.Get("Content-Type"), bodyString(t, resp)
		}
		if code, ct, body := get("/page", ""); code != 200 || ct != "text/html; charset=utf-8" || body != "<h1>&lt;b&gt;</h1>" {
			t.Errorf("render: %d %s %q", code, ct, body)
		}
		if code, _, _ := get("/missing", ""); code != 500 {
			t.Errorf("missing template: %d", code)
		}
		if code, ct, body := get("/xml", ""); code != 201 || ct != "application/xml; charset=utf-8" || body != xml.Header+"<todo><id>1</id><title>a</title></todo>" {
			t.Errorf("xml: %d %s %q", code, ct, body)
		}
		tests := []struct{ accept, ct, body string }{
			{"", "application/json", `{"id":1,"title":"a"}`},
			{"application/xml", "application/xml; charset=utf-8", xml.Header + "<todo><id>1</id><title>a</title></todo>"},
			{"text/*;q=0.9, application/json;q=0.5", "text/plain; charset=utf-8", "todo 1: a"},
			{"*/*", "application/json", `{"id":1,"title":"a"}`},
		}
		for _, tt := range tests {
			if code, ct, body := get("/neg", tt.accept); code != 200 || ct != tt.ct || body != tt.body {
				t.Errorf("Accept %q: %d %s %q", tt.accept, code, ct, body)
			}
		}
		if code, _, _ := get("/neg", "image/png"); code != 406 {
			t.Errorf("no acceptable offer: %d", code)
		}
	})
}

func TestAccepts(t *testing.T) {
	tests := []struct {
		accept string
		offers []string
		want   string
	}{
		{"", []string{"text/html", "application/json"}, "text/html"},
		{"application/json", []string{"text/html", "application/json"}, "application/json"},
		{"text/html;q=0.5, application/json", []string{"text/html", "application/json"}, "application/json"},
		{"text/*, text/html;q=0", []string{"text/html", "text/plain"}, "text/plain"},
		{"*/*;q=0.1, text/plain", []string{"application/json", "text/plain"}, "text/plain"},
		{"image/png", []string{"text/html"}, ""},
		{"TEXT/HTML", []string{"text/html"}, "text/html"},
		{"text/html;level=1;q=0.7, */*;q=0.8", []string{"text/html", "application/json"}, "application/json"},
		{"text/html;q=bogus", []string{"text/html"}, "text/html"},
	}
	for _, tt := range tests {
		if got := negotiate(tt.accept, tt.offers); got != tt.want {
			t.Errorf("negotiate(%q, %v) = %q, want %q", tt.accept, tt.offers, got, tt.want)
		}
	}
}
