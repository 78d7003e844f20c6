// Package openapi describes a Celeris server as an OpenAPI 3.1 document and
// serves it, with a docs page whose assets are embedded (no CDN).
//
// Typed routes declare their input and output types:
//
//	type GetUserIn struct {
//		ID     int    `param:"id" validate:"min=1"`
//		Fields string `query:"fields" doc:"fields to include"`
//	}
//	api := openapi.New(s, openapi.Info{Title: "Users", Version: "1.0"})
//	openapi.Get(api, "/users/:id", func(c *celeris.Context, in *GetUserIn) (*User, error) {
//		return findUser(in.ID)
//	}, openapi.Summary("Get a user"), openapi.Tags("users"))
//	api.ServeJSON(s, "/openapi.json")
//	api.ServeDocs(s, "/docs", "/openapi.json")
//
// The input is bound and validated with Context.Bind (query, header, path and
// form fields by their tags, a JSON body by its json tags, then
// Config.Validator), and its description comes from the same tags
// (celeris.BindFields) and from go-playground `validate` rules; the output is
// answered as JSON. A plain route is described by method and path with
// Describe. The error answers listed are those the framework sends: 400 for a
// value Bind cannot convert or the validator refuses, and for malformed JSON;
// 413 for a body over the limit; 415 for a body Bind cannot read; 401 (and 403
// with scopes) from the authentication middleware a Security option names.
package openapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/celeris-dev/celeris"
)

// Router is where routes are registered: a *celeris.Server or a *celeris.Group.
type Router interface {
	Handle(method, pattern string, h celeris.HandlerFunc, mw ...celeris.MiddlewareFunc) *celeris.Route
}

// API is the description of a server's routes: the operations registered
// through it (typed routes) or described (Describe), its security schemes and
// its info. Its methods may be called from several goroutines; the document is
// built once after each change and cached.
type API struct {
	router Router
	shared *apiState
}

type apiState struct {
	mu       sync.Mutex
	info     Info
	servers  []Server
	tags     []Tag
	schemes  map[string]*SecurityScheme
	security []SecurityReq
	ops      []*op
	cache    []byte // the JSON document; nil after a change
	doc      *Document
}

// op is one described operation.
type op struct {
	method, path string // path: the route pattern (":id", "*rest")
	in, out      reflect.Type
	o            opConfig
}

// New returns an empty description whose typed routes register on r.
func New(r Router, info Info) *API {
	if info.Title == "" {
		info.Title = "API"
	}
	if info.Version == "" {
		info.Version = "0.0.0"
	}
	return &API{router: r, shared: &apiState{info: info, schemes: map[string]*SecurityScheme{}}}
}

// On returns an API that registers its typed routes on r (a Group, for its
// prefix and middleware) and adds them to the same document as a.
func (a *API) On(r Router) *API { return &API{router: r, shared: a.shared} }

// AddServer lists a base URL of the API in the document.
func (a *API) AddServer(url, description string) {
	a.change(func(st *apiState) { st.servers = append(st.servers, Server{URL: url, Description: description}) })
}

// AddTag describes a tag that operations use.
func (a *API) AddTag(name, description string) {
	a.change(func(st *apiState) { st.tags = append(st.tags, Tag{Name: name, Description: description}) })
}

// SecurityScheme declares a way to authenticate under name (BearerJWT, APIKey,
// SessionCookie); operations refer to it with the Security option, or every
// operation does after DefaultSecurity.
func (a *API) SecurityScheme(name string, s SecurityScheme) {
	a.change(func(st *apiState) { st.schemes[name] = &s })
}

// DefaultSecurity makes scheme name (with scopes) required by every operation
// that has no Security option of its own; NoSecurity exempts one.
func (a *API) DefaultSecurity(name string, scopes ...string) {
	a.change(func(st *apiState) {
		st.security = append(st.security, SecurityReq{name: nonNil(scopes)})
	})
}

// BearerJWT is the scheme of the jwt module's middleware: a bearer token in
// Authorization, a JWT.
func BearerJWT() SecurityScheme {
	return SecurityScheme{Type: "http", Scheme: "bearer", BearerFormat: "JWT"}
}

// APIKey is the scheme of the keyauth middleware for its Config.Lookup
// ("header:X-API-Key", "query:api_key", "cookie:key", or "auth:Scheme", a
// token after a scheme in Authorization). It panics on another form.
func APIKey(lookup string) SecurityScheme {
	where, name, ok := strings.Cut(lookup, ":")
	if !ok || name == "" {
		panic("openapi: APIKey: malformed lookup " + strconv.Quote(lookup))
	}
	switch where {
	case "header", "query", "cookie":
		return SecurityScheme{Type: "apiKey", In: where, Name: name}
	case "auth":
		return SecurityScheme{Type: "http", Scheme: strings.ToLower(name)}
	}
	panic("openapi: APIKey: malformed lookup " + strconv.Quote(lookup))
}

// SessionCookie is the scheme of the session middleware: its cookie
// (Config.CookieName, "session" by default).
func SessionCookie(cookie string) SecurityScheme {
	if cookie == "" {
		cookie = "session"
	}
	return SecurityScheme{Type: "apiKey", In: "cookie", Name: cookie}
}

// Option describes an operation.
type Option func(*opConfig)

type opConfig struct {
	summary, description, id string
	tags                     []string
	deprecated               bool
	status                   int
	security                 []SecurityReq
	noSecurity               bool
	responses                map[int]respSpec
	errors                   []int
	in                       reflect.Type // Input, for a plain route
	body                     *respSpec    // Body, for a plain route
	mw                       []celeris.MiddlewareFunc
}

// Summary is the operation's one-line summary.
func Summary(s string) Option { return func(o *opConfig) { o.summary = s } }

// Description is the operation's longer description (CommonMark).
func Description(s string) Option { return func(o *opConfig) { o.description = s } }

// OperationID names the operation (a generated client's method name); without
// it the name is made from the method and path ("getUsersById").
func OperationID(id string) Option { return func(o *opConfig) { o.id = id } }

// Tags groups the operation.
func Tags(tags ...string) Option { return func(o *opConfig) { o.tags = append(o.tags, tags...) } }

// Deprecated marks the operation deprecated.
func Deprecated() Option { return func(o *opConfig) { o.deprecated = true } }

// Status is a typed route's success status (200 by default; a nil output is
// answered 204 No Content).
func Status(code int) Option { return func(o *opConfig) { o.status = code } }

// Security says the operation needs scheme name (declared with
// API.SecurityScheme), with scopes; several Security options are
// alternatives. It adds the 401 answer of the authentication middleware, and
// 403 when scopes are named (the jwt module's scope check).
func Security(name string, scopes ...string) Option {
	return func(o *opConfig) { o.security = append(o.security, SecurityReq{name: nonNil(scopes)}) }
}

// NoSecurity exempts the operation from DefaultSecurity.
func NoSecurity() Option { return func(o *opConfig) { o.noSecurity = true } }

// Middleware adds route middleware to a typed route (as Handle's mw).
func Middleware(mw ...celeris.MiddlewareFunc) Option {
	return func(o *opConfig) { o.mw = append(o.mw, mw...) }
}

// Errors lists error statuses the operation may answer beyond those derived
// from its input and security (404 for a missing resource, 429 behind the
// ratelimit middleware, 422, 500...), each with the framework's error body.
func Errors(codes ...int) Option { return func(o *opConfig) { o.errors = append(o.errors, codes...) } }

// Returns describes one answer: its status, content type and body (a Go
// value whose type gives the JSON schema when contentType is JSON, or nil;
// for other types the body is described as a string, binary unless the type
// is text/*). An empty contentType describes an answer without content.
func Returns(code int, contentType, description string, body any) Option {
	return func(o *opConfig) {
		if o.responses == nil {
			o.responses = map[int]respSpec{}
		}
		o.responses[code] = respSpec{contentType: contentType, description: description, body: reflect.TypeOf(body)}
	}
}

// respSpec is a Returns option; its schema is made when the document is
// built (components are registered then).
type respSpec struct {
	contentType, description string
	body                     reflect.Type
	required                 bool // of a request body
}

func (r respSpec) response(reg *registry, code int) *Response {
	out := &Response{Description: r.description}
	if out.Description == "" {
		out.Description = http.StatusText(code)
	}
	var s *Schema
	switch {
	case r.contentType == "":
		return out
	case r.body != nil && isJSON(r.contentType):
		s = reg.schemaOf(r.body, modeOut)
	case isJSON(r.contentType):
		s = &Schema{} // any JSON value
	case strings.HasPrefix(r.contentType, "text/"):
		s = &Schema{Type: "string"}
	default:
		s = &Schema{Type: "string", ContentMediaType: r.contentType}
	}
	out.Content = map[string]*MediaType{r.contentType: {Schema: s}}
	return out
}

func isJSON(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.TrimSpace(strings.ToLower(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// Body describes a plain route's request body that Bind does not read (a
// stream, a file): its content type and, for JSON, a Go value whose type
// gives the schema; other types are described as strings (binary unless
// text/*). required says whether the route needs one.
func Body(contentType, description string, body any, required bool) Option {
	return func(o *opConfig) {
		o.body = &respSpec{contentType: contentType, description: description, body: reflect.TypeOf(body), required: required}
	}
}

// Input describes a plain route's request by a struct type, as a typed
// route's input is described: its query, header, path and form fields, its
// JSON body (InputOf[T]() is the same for a type parameter).
func Input(v any) Option {
	t := reflect.TypeOf(v)
	return func(o *opConfig) { o.in = t }
}

// InputOf is Input for type T.
func InputOf[T any]() Option {
	t := reflect.TypeFor[T]()
	return func(o *opConfig) { o.in = t }
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Describe describes a plain route (registered on the server by other code)
// by method and path pattern, in the router's syntax ("/users/:id",
// "/files/*path") or as a concrete path served by a wildcard route. Without a
// Returns option it answers 200 with no content described.
func (a *API) Describe(method, path string, opts ...Option) {
	o := opConfig{}
	for _, f := range opts {
		f(&o)
	}
	a.add(&op{method: strings.ToUpper(method), path: path, in: o.in, o: o})
}

func (a *API) add(p *op) {
	a.change(func(st *apiState) {
		for i, q := range st.ops {
			if q.method == p.method && q.path == p.path {
				st.ops[i] = p
				return
			}
		}
		st.ops = append(st.ops, p)
	})
}

func (a *API) change(f func(st *apiState)) {
	st := a.shared
	st.mu.Lock()
	f(st)
	st.cache, st.doc = nil, nil
	st.mu.Unlock()
}

// Handle registers a typed route: h gets the request bound into a new I
// (Context.Bind: query, header, path, form and JSON fields, defaults, then
// Config.Validator; any failure is Bind's 400, 413 or 415) and its result is
// answered as JSON with the Status option's code (200 by default), or 204 when
// it is nil. An error h returns goes to the server's error handler. I must be
// a struct type.
func Handle[I, O any](a *API, method, path string, h func(c *celeris.Context, in *I) (*O, error), opts ...Option) *celeris.Route {
	it := reflect.TypeFor[I]()
	if it.Kind() != reflect.Struct {
		panic("openapi: the input of " + method + " " + path + " must be a struct type, not " + it.String())
	}
	celeris.BindFields(it) // panics now, at registration, on a field Bind cannot convert
	o := opConfig{status: http.StatusOK}
	for _, f := range opts {
		f(&o)
	}
	status := o.status
	r := a.router.Handle(method, path, func(c *celeris.Context) error {
		in := new(I)
		if err := c.Bind(in); err != nil {
			return err
		}
		out, err := h(c, in)
		if err != nil {
			return err
		}
		if out == nil {
			return c.NoContent(http.StatusNoContent)
		}
		return c.JSON(status, out)
	}, o.mw...)
	a.add(&op{method: r.Method(), path: r.Pattern(), in: it, out: reflect.TypeFor[O](), o: o})
	return r
}

// Get registers a typed GET route (see Handle).
func Get[I, O any](a *API, path string, h func(c *celeris.Context, in *I) (*O, error), opts ...Option) *celeris.Route {
	return Handle(a, http.MethodGet, path, h, opts...)
}

// Post registers a typed POST route (see Handle).
func Post[I, O any](a *API, path string, h func(c *celeris.Context, in *I) (*O, error), opts ...Option) *celeris.Route {
	return Handle(a, http.MethodPost, path, h, opts...)
}

// Put registers a typed PUT route (see Handle).
func Put[I, O any](a *API, path string, h func(c *celeris.Context, in *I) (*O, error), opts ...Option) *celeris.Route {
	return Handle(a, http.MethodPut, path, h, opts...)
}

// Patch registers a typed PATCH route (see Handle).
func Patch[I, O any](a *API, path string, h func(c *celeris.Context, in *I) (*O, error), opts ...Option) *celeris.Route {
	return Handle(a, http.MethodPatch, path, h, opts...)
}

// Delete registers a typed DELETE route (see Handle).
func Delete[I, O any](a *API, path string, h func(c *celeris.Context, in *I) (*O, error), opts ...Option) *celeris.Route {
	return Handle(a, http.MethodDelete, path, h, opts...)
}

// Document returns the OpenAPI 3.1 document of what a describes. It is built
// once after each change; the caller must not modify it.
func (a *API) Document() *Document {
	st := a.shared
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.doc == nil {
		st.doc = st.build()
	}
	return st.doc
}

// JSON returns the document as JSON (cached; the caller must not modify it).
func (a *API) JSON() []byte {
	st := a.shared
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.cache == nil {
		if st.doc == nil {
			st.doc = st.build()
		}
		b, err := json.MarshalIndent(st.doc, "", "  ")
		if err != nil {
			panic("openapi: " + err.Error()) // every value in the model encodes
		}
		st.cache = b
	}
	return st.cache
}

// errorNames are the components/responses of the framework's error answers.
var errorNames = map[int]string{
	400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
	405: "MethodNotAllowed", 409: "Conflict", 413: "ContentTooLarge", 415: "UnsupportedMediaType",
	422: "UnprocessableContent", 429: "TooManyRequests", 500: "InternalServerError",
	503: "ServiceUnavailable",
}

// errorDescriptions say when the framework sends each error answer.
var errorDescriptions = map[int]string{
	400: "The request's values cannot be bound (a value not of its field's type, malformed JSON) or fail validation; the body lists each field.",
	401: "Authentication is missing or invalid (the authentication middleware).",
	403: "The credentials lack a required scope.",
	405: "The path exists but not with this method; Allow lists those it has.",
	413: "The request body is larger than the server accepts.",
	415: "The request body is neither JSON nor a form.",
	429: "Too many requests (the ratelimit middleware); Retry-After says when to come back.",
	500: "The handler failed.",
}

func errorResponse(code int) *Response {
	d := errorDescriptions[code]
	if d == "" {
		d = http.StatusText(code)
	}
	return &Response{Description: d, Content: map[string]*MediaType{
		"text/plain":               {Schema: &Schema{Type: "string"}},
		"application/problem+json": {Schema: problemSchema()},
	}}
}

// problemSchema describes celeris.Problem as the error handlers send it when
// the request's Accept prefers application/problem+json (RFC 9457 §3.1; the
// binding and validation failures as "errors").
func problemSchema() *Schema {
	str := func(d string) *Schema { return &Schema{Type: "string", Description: d} }
	return &Schema{Type: "object", Required: []string{"type", "title", "status"}, Properties: map[string]*Schema{
		"type":     {Type: "string", Format: "uri-reference", Description: "names the kind of problem (about:blank: the status says it)"},
		"title":    str("a short summary of the kind of problem"),
		"status":   {Type: "integer", Description: "the HTTP status code"},
		"detail":   str("what went wrong in this occurrence"),
		"instance": str("the request's path"),
		"errors": {Type: "array", Description: "the request fields that failed binding or validation", Items: &Schema{
			Type: "object", Required: []string{"field", "message"}, Properties: map[string]*Schema{
				"field": str("the field's name in the request"), "in": str("where the value came from: query, form, header, param, json"),
				"rule": str("the rule that failed"), "param": str("the rule's parameter"), "message": str("why the value was refused"),
			}}},
	}}
}

// build makes the document; st.mu is held.
func (st *apiState) build() *Document {
	reg := newRegistry()
	doc := &Document{OpenAPI: "3.1.0", Info: st.info, Servers: st.servers, Tags: st.tags,
		Paths: map[string]*PathItem{}, Security: st.security}
	comps := &Components{Responses: map[string]*Response{}, SecuritySchemes: map[string]*SecurityScheme{}}
	for n, s := range st.schemes {
		comps.SecuritySchemes[n] = s
	}
	ids := map[string]int{}
	ops := append([]*op(nil), st.ops...)
	for _, p := range ops {
		oasPath, pathParams := convertPath(p.path)
		item := doc.Paths[oasPath]
		if item == nil {
			item = &PathItem{}
			doc.Paths[oasPath] = item
		}
		slot := item.slot(p.method)
		if slot == nil {
			continue
		}
		o := &Operation{Tags: p.o.tags, Summary: p.o.summary, Description: p.o.description,
			OperationID: p.o.id, Deprecated: p.o.deprecated, Responses: map[string]*Response{}}
		if o.OperationID == "" {
			o.OperationID = operationID(p.method, p.path)
		}
		if n := ids[o.OperationID]; n > 0 {
			o.OperationID += strconv.Itoa(n + 1)
		}
		ids[o.OperationID]++
		errs := map[int]bool{}
		hasBody := false
		if p.in != nil {
			hasBody = describeInput(reg, o, p.in, p.method)
			if len(o.Parameters) > 0 || hasBody {
				errs[400] = true
			}
			if hasBody {
				errs[413], errs[415] = true, true
			}
		}
		// Path parameters the input does not describe: strings.
		for _, name := range pathParams {
			found := false
			for _, q := range o.Parameters {
				if q.In == "path" && q.Name == name {
					found = true
				}
			}
			if !found {
				o.Parameters = append(o.Parameters, &Parameter{Name: name, In: "path", Required: true, Schema: &Schema{Type: "string"}})
			}
		}
		// A parameter tagged as a path parameter but absent from the path is
		// not one this route has.
		kept := o.Parameters[:0]
		for _, q := range o.Parameters {
			if q.In != "path" || contains(pathParams, q.Name) {
				kept = append(kept, q)
			}
		}
		o.Parameters = kept
		switch {
		case p.o.noSecurity:
			o.Security = []SecurityReq{}
		case len(p.o.security) > 0:
			o.Security = p.o.security
		}
		sec := o.Security
		if sec == nil {
			sec = st.security
		}
		for _, req := range sec {
			for _, scopes := range req {
				errs[401] = true
				if len(scopes) > 0 {
					errs[403] = true
				}
			}
		}
		for _, c := range p.o.errors {
			errs[c] = true
		}
		if p.out != nil {
			code := p.o.status
			if code == 0 {
				code = http.StatusOK
			}
			o.Responses[strconv.Itoa(code)] = &Response{Description: http.StatusText(code),
				Content: map[string]*MediaType{"application/json": {Schema: reg.schemaOf(p.out, modeOut)}}}
			o.Responses["204"] = &Response{Description: "No Content: the handler returned no value."}
		}
		if b := p.o.body; b != nil && o.RequestBody == nil {
			r := b.response(reg, 0)
			o.RequestBody = &RequestBody{Description: b.description, Required: b.required, Content: r.Content}
			errs[413] = true
		}
		for code, r := range p.o.responses {
			o.Responses[strconv.Itoa(code)] = r.response(reg, code)
		}
		codes := make([]int, 0, len(errs))
		for c := range errs {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		for _, c := range codes {
			key := strconv.Itoa(c)
			if _, ok := o.Responses[key]; ok {
				continue
			}
			name := errorNames[c]
			if name == "" {
				name = "Error" + key
			}
			comps.Responses[name] = errorResponse(c)
			o.Responses[key] = &Response{Ref: "#/components/responses/" + name}
		}
		if len(o.Responses) == 0 {
			o.Responses["200"] = &Response{Description: "OK"}
		}
		*slot = o
	}
	comps.Schemas = reg.schemas
	if len(comps.Schemas)+len(comps.Responses)+len(comps.SecuritySchemes) > 0 {
		doc.Components = comps
	}
	return doc
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// describeInput adds the parameters and body of input type t to o and
// reports whether it has a body.
func describeInput(reg *registry, o *Operation, t reflect.Type, method string) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return false
	}
	var formFields []jsonField
	bound := map[string]bool{}
	for _, f := range celeris.BindFields(t) {
		sf := t.FieldByIndex(f.Index)
		add := func(name, in string) {
			s := reg.paramSchema(f.Type)
			req := applyTags(s, sf)
			p := &Parameter{Name: name, In: in, Required: req || in == "path", Schema: s,
				Description: s.Description, Deprecated: s.Deprecated}
			s.Description, s.Deprecated = "", false
			o.Parameters = append(o.Parameters, p)
		}
		if f.Param != "" {
			add(f.Param, "path")
		}
		if f.Query != "" {
			add(f.Query, "query")
		}
		if f.Header != "" {
			add(f.Header, "header")
		}
		if f.Form != "" {
			formFields = append(formFields, jsonField{sf: sf, name: f.Form})
		}
		if f.Param != "" || f.Query != "" || f.Header != "" || f.Form != "" {
			bound[f.Name] = true
		}
	}
	// The JSON body: the fields encoding/json fills that no other source names.
	body := jsonFields(t, func(sf reflect.StructField) bool { return bound[sf.Name] })
	if len(body) == 0 && len(formFields) == 0 {
		return false
	}
	rb := &RequestBody{Content: map[string]*MediaType{}}
	if len(body) > 0 {
		var s *Schema
		if len(body) == len(jsonFields(t, nil)) && t.Name() != "" {
			s = reg.structRef(t, modeIn)
		} else {
			s = reg.objectOf(body, modeIn)
		}
		rb.Content["application/json"] = &MediaType{Schema: s}
	}
	if len(formFields) > 0 {
		s := &Schema{Type: "object", Properties: map[string]*Schema{}}
		files := false
		for _, f := range formFields {
			fs := reg.paramSchema(f.sf.Type)
			if fs.Format == "binary" || (fs.Items != nil && fs.Items.Format == "binary") {
				files = true
			}
			if applyTags(fs, f.sf) {
				s.Required = append(s.Required, f.name)
			}
			s.Properties[f.name] = fs
		}
		if !files {
			rb.Content["application/x-www-form-urlencoded"] = &MediaType{Schema: s}
		}
		rb.Content["multipart/form-data"] = &MediaType{Schema: s}
	}
	// A body is optional unless a field of it is required: Bind reads none
	// when there is none.
	for _, mt := range rb.Content {
		sch := mt.Schema
		if sch.Ref != "" {
			sch = reg.schemas[strings.TrimPrefix(sch.Ref, "#/components/schemas/")]
		}
		if len(sch.Required) > 0 {
			rb.Required = true
		}
	}
	o.RequestBody = rb
	return true
}

// convertPath turns a route pattern into an OpenAPI path ("/users/:id" ->
// "/users/{id}", "/files/*path" -> "/files/{path}") and lists its parameters.
func convertPath(pattern string) (string, []string) {
	segs := strings.Split(pattern, "/")
	var params []string
	for i, s := range segs {
		if len(s) > 1 && (s[0] == ':' || s[0] == '*') {
			params = append(params, s[1:])
			segs[i] = "{" + s[1:] + "}"
		}
	}
	return strings.Join(segs, "/"), params
}

// operationID is a name made from method and pattern: "GET /users/:id/posts"
// -> "getUsersByIdPosts".
func operationID(method, pattern string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, s := range strings.Split(pattern, "/") {
		if s == "" {
			continue
		}
		if s[0] == ':' || s[0] == '*' {
			b.WriteString("By")
			s = s[1:]
		}
		up := true
		for _, r := range s {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				up = true
				continue
			}
			if up && r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			up = false
			b.WriteRune(r)
		}
	}
	if b.Len() == len(method) {
		b.WriteString("Root")
	}
	return b.String()
}
