package celeris

// Binding: request values into a struct.
//
// Life of a Bind: the struct's plan (which fields take which sources, how each
// converts) is built once per type and cached in bindPlans; per request, Bind sets
// the defaults, decodes a JSON body (json tags) or reads a form body (another body
// is a 415), then copies query, header and path parameter values over them,
// converting each (an empty value counts as absent: bindField.present); every
// field that fails is collected; then Config.Validator, when set, checks the result
// (validate.go). Any failure is one 400 *HTTPError whose Err is a *BindError
// listing every field.

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
