package celeris

// Binding: request values into a struct.
//
// Life of a Bind: the struct's plan (which fields take which sources, how each
// converts) is built once per type and cached in bindPlans; per request, Bind sets
// the defaults, decodes a JSON body (json tags) or reads a form body, then copies
// query, header and path parameter values over them, converting each; every field
// that fails is collected; then Config.Validator, when set, checks the result. Any
// failure is one 400 *HTTPError whose Err is a *BindError listing every field.

import (
	"encoding"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Validator checks a value after binding (Config.Validator). An adapter for
// go-playground/validator is one line:
//
//	type playground struct{ v *validator.Validate }
//	func (p playground) Validate(v any) error { return p.v.Struct(v) }
//
// An error that is a slice of field errors (each with Field() string and
// Error() string, as validator.ValidationErrors), joins several errors
// (Unwrap() []error), or is a *BindError is reported field by field. A field
// error that also has Tag() and Param() (go-playground's validator.FieldError)
// gives FieldError its Rule and Param; one with StructNamespace() or
// StructField() is mapped to the field's request name (its json, form, query,
// param or header tag); one with Value() gives a scalar value's text.
type Validator interface {
	Validate(v any) error
}

// FieldError is one field that failed binding or validation. It keeps what a
// custom error handler needs to build or translate its own message: the
// request's name of the field, the rule and its parameter.
type FieldError struct {
	// Field is the field's name in the request: for a conversion error its name
	// in Source; for a validation error the name its json, form, query, param or
	// header tag gives it (the first of those present; "items[0].name" for a
	// nested one), else the name the validator reported.
	Field string
	// StructField is the Go path of the field ("Title", "Paging.Page",
	// "Items[0].Name") for a validation error whose validator reports it; "" else.
	StructField string
	// Source is "query", "form", "header", "param", "json", "default" or
	// "validate".
	Source string
	// Rule is the validation rule that failed, as the validator names it
	// (go-playground's tag: "required", "min", "email"); "" for conversion errors
	// and for validators that do not name one.
	Rule string
	// Param is the rule's parameter ("3" of min=3); "" when it has none.
	Param string
	// Value is the value that failed: the request's text for a conversion error;
	// for a validation error the field's value when it is a string, bool or number
	// (a copy: it may outlive the request), else "".
	Value string
	// Err is the conversion error, or the validator's own error for this field
	// (errors.As finds go-playground's validator.FieldError in it).
	Err error
}

// Error is the field's line of Bind's 400 message: "page (query): invalid integer
// \"x\"" for a conversion error; for a validation error with a Rule, "title is
// required" (rule required) or "title must satisfy min=3" (any other rule, with its
// Param); else the validator's own message.
func (e FieldError) Error() string {
	if e.Source != "validate" {
		return e.Field + " (" + e.Source + "): " + e.Err.Error()
	}
	switch {
	case e.Rule == "required":
		return e.Field + " is required"
	case e.Rule != "" && e.Param != "":
		return e.Field + " must satisfy " + e.Rule + "=" + e.Param
	case e.Rule != "":
		return e.Field + " must satisfy " + e.Rule
	case e.Err != nil:
		return e.Err.Error()
	}
	return e.Field + " is invalid"
}

// Unwrap returns Err.
func (e FieldError) Unwrap() error { return e.Err }

// BindError lists the fields that failed. It is the Err of the 400 *HTTPError that
// Bind, BindJSON and Validate return: a custom error handler finds it with
// errors.As, and errors.As and errors.Is also reach the validator's own error
// (go-playground's validator.ValidationErrors) and each field's Err through it.
type BindError struct {
	Fields []FieldError
	cause  error // the validator's error as it returned it; nil for conversion errors
}

func (e *BindError) Error() string {
	var b strings.Builder
	for i, f := range e.Fields {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.Error())
	}
	return b.String()
}

// Unwrap returns the validator's error (when validation failed) and each field's
// Err, for errors.Is and errors.As.
func (e *BindError) Unwrap() []error {
	out := make([]error, 0, len(e.Fields)+1)
	if e.cause != nil {
		out = append(out, e.cause)
	}
	for _, f := range e.Fields {
		if f.Err != nil && f.Err != e.cause {
			out = append(out, f.Err)
		}
	}
	return out
}

// Bind fills the struct that v points to from the request:
//
//   - fields with a `default:"..."` tag start with that value;
//   - a JSON body (Content-Type application/json or +json) is decoded with
//     encoding/json (`json:` tags); a form body (urlencoded or multipart) fills
//     `form:"name"` fields (a *multipart.FileHeader or []*multipart.FileHeader
//     field takes uploaded files);
//   - `query:"name"`, `header:"Name"` and `param:"name"` fields take the query
//     parameter, request header and path parameter (decoded) when present.
//
// An empty value (?size=, an empty form field) counts as absent: the field keeps
// its default. A bool query field given a key without value (?debug) is true, as
// QueryBool says. A body that is neither JSON nor a form is refused with 415.
//
// Supported field types: string, bool, ints, uints, floats, time.Duration
// (time.ParseDuration), time.Time (RFC 3339) and any encoding.TextUnmarshaler,
// pointers to those (allocated when a value is present) and slices of them (one
// element per repeated value). Embedded structs are walked. Strings bound are
// copies: the struct may outlive the handler.
//
// Then Config.Validator, when set, validates v. Conversion and validation failures
// are one 400 *HTTPError whose message lists each failed field (FieldError.Error)
// and whose Err is a *BindError with each field typed: its request name, source,
// rule, parameter and value. The plan for each struct type is built once and
// cached.
func (c *Context) Bind(v any) error {
	return c.bind(v, srcAll)
}

// BindQuery binds `query` fields (and defaults), then validates (see Bind).
func (c *Context) BindQuery(v any) error { return c.bind(v, srcQuery) }

// BindHeader binds `header` fields (and defaults), then validates (see Bind).
func (c *Context) BindHeader(v any) error { return c.bind(v, srcHeader) }

// BindParams binds `param` fields (and defaults), then validates (see Bind).
func (c *Context) BindParams(v any) error { return c.bind(v, srcParam) }

// BindForm binds `form` fields from a urlencoded or multipart body (and defaults),
// then validates (see Bind).
func (c *Context) BindForm(v any) error { return c.bind(v, srcForm) }

// Validate runs Config.Validator on v (nil when none is configured), with its
// failure as Bind reports it: a 400 *HTTPError listing each field.
func (c *Context) Validate(v any) error {
	if c.server.cfg.Validator == nil {
		return nil
	}
	if err := c.server.cfg.Validator.Validate(v); err != nil {
		return bindFailure(validationFields(err, reflect.TypeOf(v)), err)
	}
	return nil
}

const (
	srcQuery = 1 << iota
	srcForm
	srcHeader
	srcParam
	srcJSON
	srcAll = srcQuery | srcForm | srcHeader | srcParam | srcJSON
)

var srcNames = [...]string{"query", "form", "header", "param"}

func (c *Context) bind(v any, which int) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		panic("celeris: Bind needs a non-nil pointer to a struct, got " + reflect.TypeOf(v).String())
	}
	p := planFor(rv.Elem().Type())
	sv := rv.Elem()
	var fails []FieldError
	for i := range p.fields {
		f := &p.fields[i]
		if f.def != nil {
			if err := f.set(sv.FieldByIndex(f.index), f.def); err != nil {
				fails = append(fails, FieldError{Field: f.label(), Source: "default", Value: f.def[0], Err: err})
			}
		}
	}
	if which&srcJSON != 0 && c.hasBody() {
		ct := c.Header("Content-Type")
		switch mt := formMediaType(ct); {
		case mt != "":
			which |= srcForm
		case isJSONType(ct):
			if err := c.decodeJSON(v); err != nil {
				// A value of the wrong type is a field like the others; anything
				// else (malformed JSON, 413, 415) ends binding.
				var te *json.UnmarshalTypeError
				if !errors.As(err, &te) {
					return err
				}
				fails = append(fails, FieldError{Field: te.Field, Source: "json", Value: te.Value,
					Err: errors.New("cannot be a JSON " + te.Value + " (want " + te.Type.String() + ")")})
			}
		default:
			// A body Bind cannot read is refused, not skipped (RFC 9110 §15.5.16),
			// as Echo does; an unknown length that turns out empty is no body.
			if c.req.ContentLength < 0 {
				if b, err := c.Body(); err != nil {
					return err
				} else if len(b) == 0 {
					break
				}
			}
			return &HTTPError{Code: http.StatusUnsupportedMediaType,
				Message: "Content-Type must be application/json, application/x-www-form-urlencoded or multipart/form-data"}
		}
	}
	if which&srcForm != 0 && p.has[1] {
		if mt := formMediaType(c.Header("Content-Type")); mt != "" {
			if _, err := c.PostForm(); err != nil {
				return err
			}
			var files map[string][]*multipart.FileHeader
			if mt == mediaMultipartForm {
				if mf, err := c.MultipartForm(0); err == nil && mf != nil {
					files = mf.File
				}
			}
			post := c.forms().post
			if mf := c.forms().multi; mf != nil && len(post) == 0 {
				post = mf.Value
			}
			for i := range p.fields {
				f := &p.fields[i]
				if f.names[1] == "" {
					continue
				}
				fv := sv.FieldByIndex(f.index)
				if f.file != 0 {
					if fhs := files[f.names[1]]; len(fhs) > 0 {
						if f.file == 1 {
							fv.Set(reflect.ValueOf(fhs[0]))
						} else {
							fv.Set(reflect.ValueOf(fhs))
						}
					}
					continue
				}
				if vals := f.present(post[f.names[1]], false); len(vals) > 0 {
					if err := f.set(fv, vals); err != nil {
						fails = append(fails, FieldError{Field: f.names[1], Source: "form", Value: vals[0], Err: err})
					}
				}
			}
		}
	}
	var buf []string
	for i := range p.fields {
		f := &p.fields[i]
		for src := 0; src < len(srcNames); src++ {
			if src == 1 || f.names[src] == "" || which&(1<<src) == 0 {
				continue
			}
			buf = f.present(c.bindValues(buf[:0], src, f.names[src]), src == 0)
			if len(buf) == 0 {
				continue
			}
			if err := f.set(sv.FieldByIndex(f.index), buf); err != nil {
				fails = append(fails, FieldError{Field: f.names[src], Source: srcNames[src], Value: buf[0], Err: err})
			}
		}
	}
	if len(fails) > 0 {
		return bindFailure(fails, nil)
	}
	return c.Validate(v)
}

// bindValues appends the values of name in source src (copies).
func (c *Context) bindValues(dst []string, src int, name string) []string {
	switch src {
	case 0:
		if !c.qparsed {
			c.parseQuery()
		}
		for i := range c.query {
			if c.query[i].k == name {
				dst = append(dst, strings.Clone(c.query[i].v))
			}
		}
	case 2:
		for _, f := range c.req.Header {
			if httpmsg.EqualFold(f.Name, name) {
				dst = append(dst, strings.Clone(f.Value))
			}
		}
	case 3:
		if v, ok := c.params.Get(name); ok {
			dst = append(dst, decodePathValue(v))
		}
	}
	return dst
}

func (c *Context) hasBody() bool {
	return c.req.ContentLength != 0 || c.req.BodyReader != nil || len(c.req.Body) > 0
}

func isJSONType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

func bindFailure(fails []FieldError, cause error) *HTTPError {
	be := &BindError{Fields: fails, cause: cause}
	if len(fails) == 0 { // a validator error we could not split
		be.Fields = []FieldError{{Source: "validate", Err: cause}}
	}
	return &HTTPError{Code: http.StatusBadRequest, Message: "invalid request: " + be.Error(), Err: be}
}

// The methods of a validator's field error that validationFields reads
// (go-playground's validator.FieldError has them all).
type (
	fielder interface {
		Field() string
		Error() string
	}
	ruler interface {
		Tag() string
		Param() string
	}
	namespacer    interface{ StructNamespace() string }
	structFielder interface{ StructField() string }
	valuer        interface{ Value() any }
)

// validationFields splits a validator's error into fields (see Validator); root is
// the type of the value validated, whose tags name the fields.
func validationFields(err error, root reflect.Type) []FieldError {
	var be *BindError
	if errors.As(err, &be) {
		return be.Fields
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []FieldError
		for _, e := range j.Unwrap() {
			out = append(out, validationFields(e, root)...)
		}
		return out
	}
	if rv := reflect.ValueOf(err); rv.Kind() == reflect.Slice {
		var out []FieldError
		for i := 0; i < rv.Len(); i++ {
			if fe, ok := rv.Index(i).Interface().(fielder); ok {
				out = append(out, validationField(fe, root))
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	if fe, ok := err.(fielder); ok {
		return []FieldError{validationField(fe, root)}
	}
	return []FieldError{{Source: "validate", Err: err}}
}

// validationField is one validator field error as a FieldError.
func validationField(fe fielder, root reflect.Type) FieldError {
	out := FieldError{Field: fe.Field(), Source: "validate"}
	if err, ok := fe.(error); ok {
		out.Err = err
	}
	if r, ok := fe.(ruler); ok {
		out.Rule, out.Param = r.Tag(), r.Param()
	}
	path := ""
	if n, ok := fe.(namespacer); ok {
		// "Type.Field.Sub": the first element names the validated type.
		_, path, _ = strings.Cut(n.StructNamespace(), ".")
	} else if n, ok := fe.(structFielder); ok {
		path = n.StructField()
	} else {
		path = fe.Field()
	}
	if name, ok := requestName(root, path); ok {
		out.Field, out.StructField = name, path
	}
	if v, ok := fe.(valuer); ok {
		out.Value = scalarText(v.Value())
	}
	return out
}

// requestName maps the Go path of a field ("Items[0].Name") under t to its name in
// the request ("items[0].name"), each element named by its tag (see FieldError).
// ok is false when the path does not name a field of t.
func requestName(t reflect.Type, path string) (string, bool) {
	if path == "" || t == nil {
		return "", false
	}
	var b strings.Builder
	for path != "" {
		elem, rest, more := strings.Cut(path, ".")
		if more && rest == "" {
			return "", false // "Title."
		}
		path = rest
		name, index, _ := strings.Cut(elem, "[")
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return "", false
		}
		sf, ok := t.FieldByName(name)
		if !ok {
			return "", false
		}
		t = sf.Type
		tn, tagged := tagName(sf)
		if sf.Anonymous && !tagged && index == "" && path != "" {
			continue // an embedded struct's fields are the outer's (encoding/json)
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(tn)
		if index != "" {
			b.WriteByte('[')
			b.WriteString(index)
			// Each [i] or [key] steps into an element.
			for range strings.Count(index, "[") + 1 {
				for t.Kind() == reflect.Pointer {
					t = t.Elem()
				}
				if k := t.Kind(); k != reflect.Slice && k != reflect.Array && k != reflect.Map {
					return "", false
				}
				t = t.Elem()
			}
		}
	}
	return b.String(), true
}

// tagName is the name a struct field has in the request: its json, form, query,
// param or header tag's name (the first present; tagged true), else its Go name.
func tagName(sf reflect.StructField) (name string, tagged bool) {
	for _, key := range [...]string{"json", "form", "query", "param", "header"} {
		if n, ok := sf.Tag.Lookup(key); ok {
			if n, _, _ = strings.Cut(n, ","); n != "" && n != "-" {
				return n, true
			}
		}
	}
	return sf.Name, false
}

// scalarText is v as text when it is a string, bool or number (through one
// pointer), else "".
func scalarText(v any) string {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return ""
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.String:
		return strings.Clone(rv.String())
	case reflect.Bool:
		return strconv.FormatBool(rv.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, rv.Type().Bits())
	}
	return ""
}

// bindPlan is what Bind knows of a struct type; built once per type.
type bindPlan struct {
	fields []bindField
	has    [4]bool // some field has a tag of that source
}

type bindField struct {
	index   []int
	goName  string
	names   [4]string // query, form, header, param
	def     []string  // the default value, nil when none
	set     setter
	file    int8 // form file field: 1 *FileHeader, 2 []*FileHeader
	boolish bool // a bool, *bool or []bool: an empty query value is true
}

// present returns the values of vals that bind f: none when every one is empty (an
// empty value counts as absent, so the field keeps its default), except that for a
// bool field from the query an empty value (a key without "=", "?debug") is true,
// as QueryBool says.
func (f *bindField) present(vals []string, query bool) []string {
	for _, v := range vals {
		if v != "" {
			return vals
		}
	}
	if len(vals) == 0 || !query || !f.boolish {
		return nil
	}
	for i := range vals {
		vals[i] = "true"
	}
	return vals
}

func (f *bindField) label() string {
	for _, n := range f.names {
		if n != "" {
			return n
		}
	}
	return f.goName
}

var bindPlans sync.Map // reflect.Type -> *bindPlan

func planFor(t reflect.Type) *bindPlan {
	if p, ok := bindPlans.Load(t); ok {
		return p.(*bindPlan)
	}
	p := &bindPlan{}
	buildPlan(p, t, nil)
	actual, _ := bindPlans.LoadOrStore(t, p)
	return actual.(*bindPlan)
}

var (
	fileHeaderType  = reflect.TypeFor[*multipart.FileHeader]()
	fileHeadersType = reflect.TypeFor[[]*multipart.FileHeader]()
)

func buildPlan(p *bindPlan, t reflect.Type, index []int) {
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		idx := append(append([]int(nil), index...), i)
		var f bindField
		any := false
		for src, tag := range []string{"query", "form", "header", "param"} {
			if n, ok := sf.Tag.Lookup(tag); ok && n != "-" {
				n, _, _ = strings.Cut(n, ",")
				if n == "" {
					n = sf.Name
				}
				f.names[src], p.has[src], any = n, true, true
			}
		}
		def, hasDef := sf.Tag.Lookup("default")
		if sf.Anonymous && !any && !hasDef && sf.Type.Kind() == reflect.Struct {
			buildPlan(p, sf.Type, idx)
			continue
		}
		if (!any && !hasDef) || !sf.IsExported() {
			continue
		}
		f.index, f.goName = idx, sf.Name
		switch sf.Type {
		case fileHeaderType:
			f.file = 1
		case fileHeadersType:
			f.file = 2
		}
		if f.file == 0 {
			set, ok := makeSetter(sf.Type)
			if !ok {
				panic("celeris: Bind: field " + t.String() + "." + sf.Name + " has unsupported type " + sf.Type.String())
			}
			f.set = set
			bt := sf.Type
			if k := bt.Kind(); k == reflect.Pointer || k == reflect.Slice {
				bt = bt.Elem()
			}
			f.boolish = bt.Kind() == reflect.Bool && !reflect.PointerTo(bt).Implements(textUnmarshalerType)
			if hasDef {
				f.def = []string{def}
			}
		}
		p.fields = append(p.fields, f)
	}
}

// setter stores vals (at least one) into v.
type setter func(v reflect.Value, vals []string) error

var (
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	durationType        = reflect.TypeFor[time.Duration]()
)

func makeSetter(t reflect.Type) (setter, bool) {
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshalerType) {
		// time.Time is one: RFC 3339.
		return func(v reflect.Value, vals []string) error {
			return v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(vals[0]))
		}, true
	}
	if t == durationType {
		return func(v reflect.Value, vals []string) error {
			d, err := time.ParseDuration(vals[0])
			if err != nil {
				return errors.New("invalid duration " + strconv.Quote(vals[0]))
			}
			v.SetInt(int64(d))
			return nil
		}, true
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem, ok := makeSetter(t.Elem())
		if !ok {
			return nil, false
		}
		return func(v reflect.Value, vals []string) error {
			n := reflect.New(t.Elem())
			if err := elem(n.Elem(), vals); err != nil {
				return err
			}
			v.Set(n)
			return nil
		}, true
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return func(v reflect.Value, vals []string) error {
				v.SetBytes([]byte(vals[0]))
				return nil
			}, true
		}
		elem, ok := makeSetter(t.Elem())
		if !ok {
			return nil, false
		}
		return func(v reflect.Value, vals []string) error {
			s := reflect.MakeSlice(t, len(vals), len(vals))
			for i := range vals {
				if err := elem(s.Index(i), vals[i:i+1]); err != nil {
					return err
				}
			}
			v.Set(s)
			return nil
		}, true
	case reflect.String:
		return func(v reflect.Value, vals []string) error {
			v.SetString(vals[0])
			return nil
		}, true
	case reflect.Bool:
		return func(v reflect.Value, vals []string) error {
			b, err := strconv.ParseBool(vals[0])
			if err != nil {
				return errors.New("invalid boolean " + strconv.Quote(vals[0]))
			}
			v.SetBool(b)
			return nil
		}, true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return func(v reflect.Value, vals []string) error {
			n, err := strconv.ParseInt(vals[0], 10, bits)
			if err != nil {
				return errors.New("invalid integer " + strconv.Quote(vals[0]))
			}
			v.SetInt(n)
			return nil
		}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bits := t.Bits()
		return func(v reflect.Value, vals []string) error {
			n, err := strconv.ParseUint(vals[0], 10, bits)
			if err != nil {
				return errors.New("invalid unsigned integer " + strconv.Quote(vals[0]))
			}
			v.SetUint(n)
			return nil
		}, true
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(v reflect.Value, vals []string) error {
			n, err := strconv.ParseFloat(vals[0], bits)
			if err != nil {
				return errors.New("invalid number " + strconv.Quote(vals[0]))
			}
			v.SetFloat(n)
			return nil
		}, true
	}
	return nil, false
}

// Typed getters: they save the strconv boilerplate of the common cases.

// QueryInt returns the query parameter name as an int, def when it is absent or
// not an integer.
func (c *Context) QueryInt(name string, def int) int {
	if v := c.Query(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

// QueryInt64 is QueryInt for int64.
func (c *Context) QueryInt64(name string, def int64) int64 {
	if v := c.Query(name); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			return n
		}
	}
	return def
}

// QueryFloat returns the query parameter name as a float64, def when it is absent
// or not a number.
func (c *Context) QueryFloat(name string, def float64) float64 {
	if v := c.Query(name); v != "" {
		if n, err := strconv.ParseFloat(v, 64); err == nil {
			return n
		}
	}
	return def
}

// QueryBool returns the query parameter name as a bool (strconv.ParseBool; a
// present parameter without value, "?debug", is true), def when it is absent or
// malformed.
func (c *Context) QueryBool(name string, def bool) bool {
	if !c.qparsed {
		c.parseQuery()
	}
	for i := range c.query {
		if c.query[i].k == name {
			if c.query[i].v == "" {
				return true
			}
			if b, err := strconv.ParseBool(c.query[i].v); err == nil {
				return b
			}
			return def
		}
	}
	return def
}

// QueryDefault returns the query parameter name, def when it is absent or empty.
func (c *Context) QueryDefault(name, def string) string {
	if v := c.Query(name); v != "" {
		return v
	}
	return def
}

// ParamInt returns the path parameter name as an int, or a 400 *HTTPError naming
// it when it is not one:
//
//	id, err := c.ParamInt("id")
//	if err != nil {
//		return err
//	}
func (c *Context) ParamInt(name string) (int, error) {
	v := c.Param(name)
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, &HTTPError{Code: http.StatusBadRequest, Message: "invalid path parameter " + name + ": not an integer", Err: err}
	}
	return n, nil
}

// ParamInt64 is ParamInt for int64.
func (c *Context) ParamInt64(name string) (int64, error) {
	v := c.Param(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, &HTTPError{Code: http.StatusBadRequest, Message: "invalid path parameter " + name + ": not an integer", Err: err}
	}
	return n, nil
}
