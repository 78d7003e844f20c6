package openapi

import (
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/celeris-dev/celeris"
)

// ServeJSON answers GET path with the document as JSON (and describes that
// route).
func (a *API) ServeJSON(r Router, path string) *celeris.Route {
	a.Describe(http.MethodGet, path, Summary("This API's OpenAPI 3.1 description (JSON)"), Tags("openapi"),
		OperationID("getOpenAPIJSON"), Returns(http.StatusOK, "application/json", "The OpenAPI document.", map[string]any{}))
	return r.Handle(http.MethodGet, path, func(c *celeris.Context) error {
		return c.Blob(http.StatusOK, "application/json", a.JSON())
	})
}

// ServeYAML answers GET path with the document as YAML (and describes that
// route).
func (a *API) ServeYAML(r Router, path string) *celeris.Route {
	a.Describe(http.MethodGet, path, Summary("This API's OpenAPI 3.1 description (YAML)"), Tags("openapi"),
		OperationID("getOpenAPIYAML"), Returns(http.StatusOK, "application/yaml", "The OpenAPI document.", nil))
	return r.Handle(http.MethodGet, path, func(c *celeris.Context) error {
		b, err := a.YAML()
		if err != nil {
			return err
		}
		return c.Blob(http.StatusOK, "application/yaml", b)
	})
}

// YAML returns the document as YAML.
func (a *API) YAML() ([]byte, error) {
	return yaml.JSONToYAML(a.JSON())
}

// The docs page's viewer: Swagger UI (swagger-ui-dist 5.32.0, Apache-2.0;
// docsui/LICENSE, docsui/NOTICE and the bundle's third-party notices in
// docsui/swagger-ui-bundle.js.LICENSE.txt), stored gzip-compressed.
//
//go:embed docsui/swagger-ui-bundle.js.gz docsui/swagger-ui.css.gz
var docsUI embed.FS

// asset is one embedded file: its gzip form is sent to clients that accept
// gzip, the plain form (decompressed once, on first need) to others.
type asset struct {
	name, contentType string
	once              sync.Once
	gz, plain         []byte
}

func (as *asset) load() []byte {
	as.once.Do(func() {
		zr, err := gzip.NewReader(bytes.NewReader(as.gz))
		if err != nil {
			panic("openapi: embedded " + as.name + ": " + err.Error())
		}
		as.plain, err = io.ReadAll(zr)
		if err != nil {
			panic("openapi: embedded " + as.name + ": " + err.Error())
		}
	})
	return as.plain
}

func newAsset(name, contentType string) *asset {
	gz, err := docsUI.ReadFile("docsui/" + name + ".gz")
	if err != nil {
		panic("openapi: " + err.Error())
	}
	return &asset{name: name, contentType: contentType, gz: gz}
}

var (
	assetsOnce sync.Once
	uiJS       *asset
	uiCSS      *asset
)

// acceptsGzip reports whether Accept-Encoding allows gzip (a q of 0 refuses it).
func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.TrimSpace(strings.ToLower(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		params = strings.ReplaceAll(strings.ToLower(params), " ", "")
		if q, ok := strings.CutPrefix(params, "q="); ok {
			if f, err := strconv.ParseFloat(q, 64); err == nil && f == 0 {
				return false
			}
		}
		return true
	}
	return false
}

func (as *asset) serve(c *celeris.Context) error {
	c.SetHeader("Cache-Control", "public, max-age=86400")
	c.SetHeader("Vary", "Accept-Encoding")
	if acceptsGzip(c.Header("Accept-Encoding")) {
		c.SetHeader("Content-Encoding", "gzip")
		return c.Blob(http.StatusOK, as.contentType, as.gz)
	}
	return c.Blob(http.StatusOK, as.contentType, as.load())
}

// ServeDocs serves a docs page at GET path for the document at specPath (a
// path on the same server, as given to ServeJSON), and its script and style
// at path+"/swagger-ui-bundle.js" and path+"/swagger-ui.css", from the
// module's embedded copy of Swagger UI: the page loads nothing from
// elsewhere. The routes are described in the document.
func (a *API) ServeDocs(r Router, path, specPath string) {
	assetsOnce.Do(func() {
		uiJS = newAsset("swagger-ui-bundle.js", "text/javascript; charset=utf-8")
		uiCSS = newAsset("swagger-ui.css", "text/css; charset=utf-8")
	})
	base := strings.TrimSuffix(path, "/")
	page := []byte(docsPage(a.shared.info.Title, base+"/swagger-ui.css", base+"/swagger-ui-bundle.js", specPath))
	a.Describe(http.MethodGet, path, Summary("Documentation page (Swagger UI)"), Tags("openapi"),
		OperationID("getDocs"), Returns(http.StatusOK, "text/html", "An HTML page that renders the description.", nil))
	a.Describe(http.MethodGet, base+"/swagger-ui-bundle.js", Summary("The docs page's script"), Tags("openapi"),
		OperationID("getDocsScript"), Returns(http.StatusOK, "text/javascript", "Swagger UI's bundle.", nil))
	a.Describe(http.MethodGet, base+"/swagger-ui.css", Summary("The docs page's style sheet"), Tags("openapi"),
		OperationID("getDocsStyle"), Returns(http.StatusOK, "text/css", "Swagger UI's style sheet.", nil))
	r.Handle(http.MethodGet, path, func(c *celeris.Context) error {
		return c.Blob(http.StatusOK, "text/html; charset=utf-8", page)
	})
	r.Handle(http.MethodGet, base+"/swagger-ui-bundle.js", uiJS.serve)
	r.Handle(http.MethodGet, base+"/swagger-ui.css", uiCSS.serve)
}

func docsPage(title, css, js, spec string) string {
	// encoding/json escapes <, > and &: the string cannot end the script.
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>` + html.EscapeString(title) + `</title>
<link rel="stylesheet" href="` + html.EscapeString(css) + `">
</head>
<body>
<div id="ui"></div>
<script src="` + html.EscapeString(js) + `"></script>
<script>
window.ui = SwaggerUIBundle({
  url: ` + q(spec) + `,
  dom_id: "#ui",
  deepLinking: true,
  validatorUrl: null
});
</script>
</body>
</html>
`
}
