package secure_test

import (
	"html/template"
	"log"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/secure"
)

func Example() {
	page := template.Must(template.New("index.html").Parse(
		`<script nonce="{{.Nonce}}">console.log("inline, allowed by its nonce")</script>`))
	s := celeris.New(celeris.Config{Addr: ":8080", Renderer: celeris.HTMLTemplates{T: page}})
	s.Use(secure.New(secure.Config{
		HSTSMaxAge:            2 * 365 * 24 * time.Hour,
		HSTSIncludeSubdomains: true,
		ContentSecurityPolicy: "default-src 'self'; script-src 'self' 'nonce-{nonce}'; object-src 'none'; base-uri 'none'",
	}))
	s.GET("/", func(c *celeris.Context) error {
		return c.Render(200, "index.html", map[string]any{"Nonce": secure.Nonce(c)})
	})
	log.Fatal(s.Start())
}
