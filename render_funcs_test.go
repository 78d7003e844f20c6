package celeris

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

func init() {
	RegisterTemplateFunc("testPath", func(c *Context) any { return c.Path() })
}

// Concurrent renders over sockets each read their own Context through a
// registered template function (clones are reused across requests); executed
// outside Render, the function fails instead of reading a stale Context.
func TestTemplateContextFuncs(t *testing.T) {
	files := fstest.MapFS{"p.html": {Data: []byte(`{{testPath}}|{{.}}`)}}
	h := MustParseHTMLTemplates(files, "p.html")
	if h.T.Name() != "p.html" { // as template.ParseFS names it
		t.Errorf("set named %q", h.T.Name())
	}
	_, addr := startServer(t, Config{Renderer: h}, func(s *Server) {
		s.GET("/r/:id", func(c *Context) error { return c.Render(200, "p.html", c.Param("id")) })
	})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				id := fmt.Sprint(i, "-", j)
				if code, body := rawGet(t, addr, "/r/"+id); code != 200 || body != "/r/"+id+"|"+id {
					t.Errorf("%d %q, want /r/%s|%s", code, body, id, id)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := h.T.ExecuteTemplate(io.Discard, "p.html", "x"); err == nil || !strings.Contains(err.Error(), "outside Context.Render") {
		t.Errorf("executed outside Render: %v", err)
	}
	// Parsed without the functions declared, a template calling one fails to parse.
	if _, err := template.New("x").Parse(`{{testPath}}`); err == nil {
		t.Error("parsed without TemplateFuncs")
	}
}
