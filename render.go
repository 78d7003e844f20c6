package celeris

// Rendering and content negotiation.

import (
	"encoding/xml"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Renderer renders a named template (Config.Renderer, Context.Render). Render
// writes the output to w; it must be safe for concurrent use.
type Renderer interface {
	Render(w io.Writer, name string, data any, c *Context) error
}

// HTMLTemplates is a Renderer over html/template: Render executes the template
// called name, with the functions registered by RegisterTemplateFunc bound to
// the request's Context ({{cspNonce}} with middleware/secure, {{csrfField}} with
// middleware/csrf). Declare those functions before parsing (ParseHTMLTemplates
// does; by hand, Funcs(celeris.TemplateFuncs())), and leave T to Render: it
// executes clones of T (kept for reuse, up to 64 idle ones per T, for the life of
// the process), which T executed elsewhere prevents.
//
//	s := celeris.New(celeris.Config{Renderer: celeris.MustParseHTMLTemplates(files, "templates/*.html")})
type HTMLTemplates struct {
	T *template.Template
}

// Render implements Renderer.
func (h HTMLTemplates) Render(w io.Writer, name string, data any, c *Context) error {
	if c == nil {
		return h.T.ExecuteTemplate(w, name, data)
	}
	return executeBound(h.T, w, name, data, c)
}

// ParseHTMLTemplates parses the templates of fsys matching patterns into an
// HTMLTemplates (template.ParseFS), with the functions of TemplateFuncs declared.
func ParseHTMLTemplates(fsys fs.FS, patterns ...string) (HTMLTemplates, error) {
	// As template.ParseFS, the set is named after the first file matched.
	name := ""
	for _, p := range patterns {
		if m, _ := fs.Glob(fsys, p); len(m) > 0 {
			name = path.Base(m[0])
			break
		}
	}
	t, err := template.New(name).Funcs(TemplateFuncs()).ParseFS(fsys, patterns...)
	return HTMLTemplates{T: t}, err
}

// MustParseHTMLTemplates is ParseHTMLTemplates that panics on an error, for
// templates parsed at start-up.
func MustParseHTMLTemplates(fsys fs.FS, patterns ...string) HTMLTemplates {
	h, err := ParseHTMLTemplates(fsys, patterns...)
	if err != nil {
		panic(err)
	}
	return h
}

// Render renders the template name with data through Config.Renderer and writes
// it as text/html (a Content-Type set before is kept). The output is buffered, so
// a template error becomes a 500 (logged) instead of a half-written page.
func (c *Context) Render(code int, name string, data any) error {
	r := c.server.cfg.Renderer
	if r == nil {
		return &HTTPError{Code: http.StatusInternalServerError, Err: errNoRenderer}
	}
	b := c.Buffer()
	if err := r.Render(b, name, data, c); err != nil {
		return &HTTPError{Code: http.StatusInternalServerError, Err: err}
	}
	return c.typed(code, "text/html; charset=utf-8", b.Bytes())
}

var errNoRenderer = strErr("celeris: Render needs Config.Renderer")

type strErr string

func (e strErr) Error() string { return string(e) }

// XML encodes v with encoding/xml, after the XML header, and writes it as
// application/xml (a Content-Type set before is kept).
func (c *Context) XML(code int, v any) error {
	b := c.Buffer()
	b.WriteString(xml.Header)
	if err := xml.NewEncoder(b).Encode(v); err != nil {
		return &HTTPError{Code: http.StatusInternalServerError, Err: err}
	}
	return c.typed(code, "application/xml; charset=utf-8", b.Bytes())
}

// Accepts returns the one of offers (media types such as "application/json" or
// "text/html") that the request's Accept header prefers (RFC 9110 §12.5.1):
// highest q-value first, then the most specific match ("text/html" over
// "text/*" over "*/*"), then the order of offers. Without an Accept header the
// first offer is returned; when no offer is acceptable, "".
func (c *Context) Accepts(offers ...string) string {
	return negotiate(c.Header("Accept"), offers)
}

// Negotiate answers with the representation of offers that Accepts picks: the
// keys are media types, the values what to send. "application/json" (and
// +json types) encode with JSON, "application/xml" and "text/xml" with XML,
// "text/html" renders the template named by a string value through Render when a
// Renderer is configured (else sends the string as HTML), "text/plain" sends a
// string value (or fmt's %v of it). Other types need a []byte value. No
// acceptable offer: 406 Not Acceptable. Vary: Accept is added.
//
//	return c.Negotiate(200, map[string]any{
//		"application/json": todo,
//		"application/xml":  todo,
//	})
func (c *Context) Negotiate(code int, offers map[string]any) error {
	types := make([]string, 0, len(offers))
	for t := range offers {
		types = append(types, t)
	}
	slices.Sort(types)                                               // map order is random: make the tie-break stable
	for _, pref := range []string{"application/json", "text/html"} { // preferred on ties
		for i, t := range types {
			if t == pref {
				copy(types[1:i+1], types[:i])
				types[0] = pref
			}
		}
	}
	c.AddHeader("Vary", "Accept")
	t := c.Accepts(types...)
	if t == "" {
		return NewHTTPError(http.StatusNotAcceptable, "none of "+strings.Join(types, ", ")+" is acceptable")
	}
	v := offers[t]
	switch {
	case t == "application/json" || strings.HasSuffix(t, "+json"):
		c.SetHeader("Content-Type", t)
		return c.JSON(code, v)
	case t == "application/xml" || t == "text/xml" || strings.HasSuffix(t, "+xml"):
		c.SetHeader("Content-Type", t+"; charset=utf-8")
		return c.XML(code, v)
	case t == "text/html":
		if s, ok := v.(string); ok {
			if c.server.cfg.Renderer != nil {
				return c.Render(code, s, nil)
			}
			return c.HTML(code, s)
		}
		if b, ok := v.([]byte); ok {
			return c.Blob(code, "text/html; charset=utf-8", b)
		}
	case t == "text/plain":
		switch x := v.(type) {
		case string:
			return c.String(code, x)
		case []byte:
			return c.Blob(code, "text/plain; charset=utf-8", x)
		}
		b := c.Buffer()
		b.WriteString(anyString(v))
		return c.Blob(code, "text/plain; charset=utf-8", b.Bytes())
	}
	if b, ok := v.([]byte); ok {
		return c.Blob(code, t, b)
	}
	return &HTTPError{Code: http.StatusInternalServerError, Err: strErr("celeris: Negotiate: no encoder for " + t)}
}

// negotiate picks an offer for an Accept value (see Accepts).
func negotiate(accept string, offers []string) string {
	if len(offers) == 0 {
		return ""
	}
	if strings.TrimSpace(accept) == "" {
		return offers[0]
	}
	best, bestQ, bestSpec := "", 0.0, -1
	for _, offer := range offers {
		ot, os, _ := strings.Cut(strings.ToLower(offer), "/")
		q, spec := -1.0, -1
		for rng := range strings.SplitSeq(accept, ",") {
			mr, params, _ := strings.Cut(rng, ";")
			mt, ms, ok := strings.Cut(strings.ToLower(strings.TrimSpace(mr)), "/")
			if !ok {
				continue
			}
			s := -1
			switch {
			case mt == ot && ms == os:
				s = 2
			case mt == ot && ms == "*":
				s = 1
			case mt == "*" && ms == "*":
				s = 0
			}
			if s < spec || s < 0 {
				continue
			}
			rq := acceptQ(params)
			if s > spec || rq > q { // the most specific range decides (RFC 9110 §12.5.1)
				q, spec = rq, s
			}
		}
		if q > bestQ || (q == bestQ && q > 0 && spec > bestSpec) {
			best, bestQ, bestSpec = offer, q, spec
		}
	}
	return best
}

// acceptQ reads the q parameter of an Accept range (1 when absent or malformed).
func acceptQ(params string) float64 {
	for p := range strings.SplitSeq(params, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || q < 0 || q > 1 {
				return 1
			}
			return q
		}
	}
	return 1
}

func anyString(v any) string { return fmt.Sprint(v) }
