package celeris

import (
	"errors"
	"html/template"
	"io"
	"sync"
)

// Template functions that read the request: HTMLTemplates executes each
// template with them bound to the Context of the Render call, so a page writes
// {{cspNonce}} or {{csrfField}} without the handler passing them in its data.
// Packages register theirs once, at init: middleware/secure registers
// "cspNonce", middleware/csrf "csrfToken" and "csrfField".

var (
	contextFuncsMu sync.RWMutex
	contextFuncs   = map[string]func(c *Context) any{}
)

// RegisterTemplateFunc makes name a function of the templates HTMLTemplates
// executes: {{name}} calls f with the Context of the Render call (f returns a
// string, or a template.HTML that is already safe HTML). Call it from an init
// function, before templates are parsed: html/template checks at parse time that
// every function a template calls exists. A second registration of name
// replaces the first.
func RegisterTemplateFunc(name string, f func(c *Context) any) {
	contextFuncsMu.Lock()
	contextFuncs[name] = f
	contextFuncsMu.Unlock()
}

// errNoContext is what a registered function answers when its template is
// executed outside HTMLTemplates.Render (t.Execute called directly).
var errNoContext = errors.New("celeris: a Context template function was called outside Context.Render")

// TemplateFuncs returns the registered functions (RegisterTemplateFunc) as a
// template.FuncMap to declare before parsing, for templates parsed by hand:
//
//	t := template.Must(template.New("page").Funcs(celeris.TemplateFuncs()).Parse(src))
//
// ParseHTMLTemplates declares them itself. Executed outside Context.Render, they
// fail with an error.
func TemplateFuncs() template.FuncMap {
	contextFuncsMu.RLock()
	defer contextFuncsMu.RUnlock()
	m := make(template.FuncMap, len(contextFuncs))
	for name := range contextFuncs {
		m[name] = func() (any, error) { return nil, errNoContext }
	}
	return m
}

// boundTemplate is a clone of a template set whose registered functions read
// c, which Render sets for one execution.
type boundTemplate struct {
	t *template.Template
	c *Context
}

// boundPool holds a template set's idle clones. A clone is escaped by
// html/template on its first execution (costly), then reused; maxIdle bounds
// what a burst leaves behind. sync.Pool would drop clones at every collection
// and make requests pay for escaping again.
type boundPool struct {
	mu   sync.Mutex
	idle []*boundTemplate
}

const maxIdleTemplates = 64

// boundPools maps a *template.Template (HTMLTemplates.T) to its boundPool.
var boundPools sync.Map

// executeBound executes name of t with the registered functions bound to c.
// It executes a clone of t, so t itself stays unexecuted and can be cloned; when
// t was already executed elsewhere (html/template then refuses Clone), t runs
// as it is and the functions answer errNoContext.
func executeBound(t *template.Template, w io.Writer, name string, data any, c *Context) error {
	v, ok := boundPools.Load(t)
	if !ok {
		v, _ = boundPools.LoadOrStore(t, &boundPool{})
	}
	p := v.(*boundPool)
	p.mu.Lock()
	var b *boundTemplate
	if n := len(p.idle); n > 0 {
		b = p.idle[n-1]
		p.idle = p.idle[:n-1]
	}
	p.mu.Unlock()
	if b == nil {
		clone, err := t.Clone()
		if err != nil {
			return t.ExecuteTemplate(w, name, data)
		}
		b = &boundTemplate{t: clone}
		contextFuncsMu.RLock()
		funcs := make(template.FuncMap, len(contextFuncs))
		for fname, f := range contextFuncs {
			funcs[fname] = func() any { return f(b.c) }
		}
		contextFuncsMu.RUnlock()
		clone.Funcs(funcs)
	}
	b.c = c
	err := b.t.ExecuteTemplate(w, name, data)
	b.c = nil
	p.mu.Lock()
	if len(p.idle) < maxIdleTemplates {
		p.idle = append(p.idle, b)
	}
	p.mu.Unlock()
	return err
}
