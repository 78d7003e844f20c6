package secure_test

import (
	"html/template"
	"log"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/secure"
)

func Example() {
	// cspNonce is a function of the templates celeris.HTMLTemplates renders.
	page := template.Must(template.New("index.html").Funcs(celeris.TemplateFuncs()).Parse(
		`<script nonce="{{cspNonce}}">console.log("inline, allowed by its nonce")</script>`))
	s := celeris.New(celeris.Config{Addr: ":8080", Renderer: celeris.HTMLTemplates{T: page}})
	s.Use(secure.New(secure.Config{
		HSTSMaxAge:            2 * secure.HSTSYear,
		HSTSIncludeSubdomains: true,
		ContentSecurityPolicy: "default-src 'self'; script-src 'self' 'nonce-{nonce}'; object-src 'none'; base-uri 'none'",
	}))
	s.GET("/", func(c *celeris.Context) error {
		return c.Render(200, "index.html", nil)
	})
	log.Fatal(s.Start())
}
