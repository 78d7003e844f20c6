package openapi

// JSON Schema (2020-12, the dialect of OpenAPI 3.1) from Go types.
//
// A type's schema follows what the framework does with it: a JSON body or
// answer is encoded by encoding/json, so its fields are named by their json
// tags (omitempty, omitzero and "-" honoured, embedded structs flattened); a
// query, header, path or form value is converted by Bind (celeris.BindFields
// names it). Each field's constraints come from its tags: go-playground's
// `validate` rules (the Validator most users plug into Config.Validator),
// `default`, and the documentation tags `doc`, `example`, `format`, `pattern`
// and `enum`. Named struct types become components ($ref); the rest is inline.

import (
	"encoding"
	"encoding/json"
	"mime/multipart"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Schema is a JSON Schema (2020-12) as OpenAPI 3.1 uses it; only the keywords
// this package writes.
type Schema struct {
	Ref                  string             `json:"$ref,omitempty"`
	Type                 string             `json:"type,omitempty"`
	Format               string             `json:"format,omitempty"`
	Title                string             `json:"title,omitempty"`
	Description          string             `json:"description,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Default              any                `json:"default,omitempty"`
	Examples             []any              `json:"examples,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	ExclusiveMinimum     *float64           `json:"exclusiveMinimum,omitempty"`
	ExclusiveMaximum     *float64           `json:"exclusiveMaximum,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MaxLength            *int               `json:"maxLength,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	MinItems             *int               `json:"minItems,omitempty"`
	MaxItems             *int               `json:"maxItems,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *Schema            `json:"additionalProperties,omitempty"`
	MinProperties        *int               `json:"minProperties,omitempty"`
	MaxProperties        *int               `json:"maxProperties,omitempty"`
	ContentEncoding      string             `json:"contentEncoding,omitempty"`
	ContentMediaType     string             `json:"contentMediaType,omitempty"`
	Deprecated           bool               `json:"deprecated,omitempty"`
}

// mode says which side of the wire a struct schema describes: a field of an
// answer without omitempty is always present (required); a field of a request
// is required only when its rules say so.
type mode int

const (
	modeOut mode = iota
	modeIn
)

type schemaKey struct {
	t reflect.Type
	m mode
}

// registry holds the components a document's schemas refer to.
type registry struct {
	schemas map[string]*Schema
	names   map[schemaKey]string
}

func newRegistry() *registry {
	return &registry{schemas: map[string]*Schema{}, names: map[schemaKey]string{}}
}

var (
	timeType            = reflect.TypeFor[time.Time]()
	durationType        = reflect.TypeFor[time.Duration]()
	fileHeaderType      = reflect.TypeFor[multipart.FileHeader]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonMarshalerType   = reflect.TypeFor[json.Marshaler]()
)

// schemaOf is the schema of a JSON value of type t.
func (g *registry) schemaOf(t reflect.Type, m mode) *Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType:
		return &Schema{Type: "string", Format: "date-time"}
	case rawMessageType:
		return &Schema{}
	case fileHeaderType:
		return &Schema{Type: "string", Format: "binary"}
	}
	if t.Implements(jsonMarshalerType) || reflect.PointerTo(t).Implements(jsonMarshalerType) {
		return &Schema{} // its own encoding: any value
	}
	if t.Kind() != reflect.String && (t.Implements(textMarshalerType) || reflect.PointerTo(t).Implements(textMarshalerType)) {
		return &Schema{Type: "string"}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: "boolean"}
	case reflect.Int, reflect.Int64:
		return &Schema{Type: "integer", Format: "int64"}
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return &Schema{Type: "integer", Format: "int32"}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &Schema{Type: "integer", Minimum: ptr(0.0)}
	case reflect.Float32:
		return &Schema{Type: "number", Format: "float"}
	case reflect.Float64:
		return &Schema{Type: "number", Format: "double"}
	case reflect.String:
		return &Schema{Type: "string"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &Schema{Type: "string", ContentEncoding: "base64"} // encoding/json's []byte
		}
		return &Schema{Type: "array", Items: g.schemaOf(t.Elem(), m)}
	case reflect.Map:
		return &Schema{Type: "object", AdditionalProperties: g.schemaOf(t.Elem(), m)}
	case reflect.Struct:
		return g.structRef(t, m)
	}
	return &Schema{} // interfaces, and what encoding/json cannot encode
}

// structRef is a $ref to the component of a named struct (registered on first
// use), or the inline schema of an unnamed one.
func (g *registry) structRef(t reflect.Type, m mode) *Schema {
	if t.Name() == "" {
		return g.structSchema(t, m)
	}
	key := schemaKey{t, m}
	if name, ok := g.names[key]; ok {
		return &Schema{Ref: "#/components/schemas/" + name}
	}
	name := componentName(t)
	if m == modeIn {
		if _, taken := g.schemas[name]; taken {
			name += "Input"
		}
	}
	for i := 2; ; i++ {
		if _, taken := g.schemas[name]; !taken {
			break
		}
		name = componentName(t) + strconv.Itoa(i)
	}
	g.names[key] = name
	g.schemas[name] = &Schema{} // reserved: a recursive type refers to itself
	*g.schemas[name] = *g.structSchema(t, m)
	return &Schema{Ref: "#/components/schemas/" + name}
}

// componentName is a type's name as a component key (^[a-zA-Z0-9._-]+$): a
// generic type's arguments become part of it.
func componentName(t reflect.Type) string {
	var b strings.Builder
	upper := false
	for _, r := range t.Name() {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			if upper && r >= 'a' && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			upper = false
		default:
			upper = true
		}
	}
	return b.String()
}

// jsonField is a struct field as encoding/json encodes it.
type jsonField struct {
	sf        reflect.StructField
	name      string
	omitEmpty bool
	asString  bool
}

// jsonFields lists t's fields by encoding/json's rules: exported, not "-",
// embedded structs without a json name flattened (a field of the outer struct
// wins over one of the same name inside).
func jsonFields(t reflect.Type, skip func(reflect.StructField) bool) []jsonField {
	var out []jsonField
	seen := map[string]bool{}
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		var embedded []reflect.Type
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag, hasTag := sf.Tag.Lookup("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if sf.Anonymous && name == "" {
				et := sf.Type
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					embedded = append(embedded, et)
					continue
				}
			}
			if !sf.IsExported() || (skip != nil && skip(sf)) {
				continue
			}
			if name == "" || !hasTag {
				name = sf.Name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			f := jsonField{sf: sf, name: name}
			for _, o := range strings.Split(opts, ",") {
				switch o {
				case "omitempty", "omitzero":
					f.omitEmpty = true
				case "string":
					f.asString = true
				}
			}
			out = append(out, f)
		}
		if depth < 8 {
			for _, et := range embedded {
				walk(et, depth+1)
			}
		}
	}
	walk(t, 0)
	return out
}

// structSchema is the object schema of struct t as encoding/json sees it.
func (g *registry) structSchema(t reflect.Type, m mode) *Schema {
	return g.objectOf(jsonFields(t, nil), m)
}

func (g *registry) objectOf(fields []jsonField, m mode) *Schema {
	s := &Schema{Type: "object", Properties: map[string]*Schema{}}
	for _, f := range fields {
		fs := g.schemaOf(f.sf.Type, m)
		if f.asString {
			fs = &Schema{Type: "string"}
		}
		req := applyTags(fs, f.sf)
		if !req && m == modeOut && !f.omitEmpty && f.sf.Type.Kind() != reflect.Pointer &&
			f.sf.Tag.Get("validate") == "" {
			req = true // always encoded
		}
		if req {
			s.Required = append(s.Required, f.name)
		}
		s.Properties[f.name] = fs
	}
	return s
}

// applyTags gives s the constraints and documentation of field sf's tags and
// reports whether a rule requires the field.
func applyTags(s *Schema, sf reflect.StructField) (required bool) {
	t := sf.Type
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// A $ref's siblings are kept by 3.1 readers; constraints go on inline schemas only.
	target := s
	if s.Ref != "" {
		target = nil
	}
	if d := sf.Tag.Get("doc"); d != "" {
		s.Description = d
	}
	if _, ok := sf.Tag.Lookup("deprecated"); ok {
		s.Deprecated = true
	}
	if target == nil {
		return hasRule(sf.Tag.Get("validate"), "required")
	}
	if f := sf.Tag.Get("format"); f != "" {
		s.Format = f
	}
	if p := sf.Tag.Get("pattern"); p != "" {
		s.Pattern = p
	}
	if e := sf.Tag.Get("enum"); e != "" {
		for _, v := range strings.Split(e, ",") {
			if x, ok := parseValue(t, v); ok {
				s.Enum = append(s.Enum, x)
			}
		}
	}
	if d, ok := sf.Tag.Lookup("default"); ok {
		if x, ok := parseValue(t, d); ok {
			s.Default = x
		}
	}
	if e, ok := sf.Tag.Lookup("example"); ok {
		if x, ok := parseValue(t, e); ok {
			s.Examples = []any{x}
		}
	}
	return applyRules(s, t, sf.Tag.Get("validate"))
}

func hasRule(rules, name string) bool {
	for _, r := range strings.Split(rules, ",") {
		if r == "dive" {
			return false
		}
		if r == name {
			return true
		}
	}
	return false
}

// applyRules gives s the constraints of go-playground validator rules (a
// `validate` tag) for a value of type t; the rules after "dive" apply to the
// elements of a slice, array or map. It reports whether "required" is among
// the field's own rules. Rules without a JSON Schema form (cross-field ones,
// custom ones) are left to the validator.
func applyRules(s *Schema, t reflect.Type, rules string) (required bool) {
	if rules == "" {
		return false
	}
	list := strings.Split(rules, ",")
	for i, r := range list {
		name, param, _ := strings.Cut(r, "=")
		if strings.Contains(name, "|") {
			continue // alternatives: no single constraint
		}
		switch name {
		case "required":
			required = true
		case "dive":
			if k := t.Kind(); k != reflect.Slice && k != reflect.Array && k != reflect.Map {
				return required // the validator refuses such a tag; nothing to describe
			}
			et := t.Elem()
			for et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			var items *Schema
			switch {
			case s.Items != nil:
				items = s.Items
			case s.AdditionalProperties != nil:
				items = s.AdditionalProperties
			}
			if items != nil && items.Ref == "" {
				applyRules(items, et, strings.Join(list[i+1:], ","))
			}
			return required
		case "min", "gte":
			bound(s, t, param, true, false)
		case "max", "lte":
			bound(s, t, param, false, false)
		case "gt":
			bound(s, t, param, true, true)
		case "lt":
			bound(s, t, param, false, true)
		case "len", "eq":
			if name == "eq" && t.Kind() == reflect.String {
				s.Enum = []any{param}
				continue
			}
			bound(s, t, param, true, false)
			bound(s, t, param, false, false)
		case "oneof":
			s.Enum = nil
			for _, v := range oneofValues(param) {
				if x, ok := parseValue(t, v); ok {
					s.Enum = append(s.Enum, x)
				}
			}
		case "email":
			s.Format = "email"
		case "url", "uri", "http_url":
			s.Format = "uri"
		case "uuid", "uuid3", "uuid4", "uuid5", "uuid_rfc4122", "uuid4_rfc4122":
			s.Format = "uuid"
		case "ipv4", "ip4_addr":
			s.Format = "ipv4"
		case "ipv6", "ip6_addr":
			s.Format = "ipv6"
		case "hostname", "hostname_rfc1123":
			s.Format = "hostname"
		case "alpha":
			s.Pattern = "^[a-zA-Z]+$"
		case "alphanum":
			s.Pattern = "^[a-zA-Z0-9]+$"
		case "numeric":
			s.Pattern = `^[-+]?[0-9]+(?:\.[0-9]+)?$`
		case "number":
			s.Pattern = "^[0-9]+$"
		case "lowercase":
			s.Pattern = "^[^A-Z]*$"
		case "uppercase":
			s.Pattern = "^[^a-z]*$"
		}
	}
	return required
}

// oneofValues splits a oneof parameter: space-separated, a value with spaces in
// single quotes (go-playground's syntax).
func oneofValues(p string) []string {
	var out []string
	for p = strings.TrimSpace(p); p != ""; p = strings.TrimSpace(p) {
		if p[0] == '\'' {
			if end := strings.IndexByte(p[1:], '\''); end >= 0 {
				out = append(out, p[1:1+end])
				p = p[end+2:]
				continue
			}
		}
		v, rest, _ := strings.Cut(p, " ")
		out = append(out, v)
		p = rest
	}
	return out
}

// bound sets a lower (lower) or upper bound from a rule's parameter: a length
// for strings, a count for slices and maps, a value for numbers.
func bound(s *Schema, t reflect.Type, param string, lower, exclusive bool) {
	switch t.Kind() {
	case reflect.String, reflect.Slice, reflect.Array, reflect.Map:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && s.Type == "string" {
			return // base64 text: its length is not the byte count
		}
		n, err := strconv.Atoi(param)
		if err != nil {
			return
		}
		if exclusive {
			if lower {
				n++
			} else {
				n--
			}
		}
		if n < 0 {
			n = 0
		}
		switch t.Kind() {
		case reflect.String:
			if lower {
				s.MinLength = &n
			} else {
				s.MaxLength = &n
			}
		case reflect.Map:
			if lower {
				s.MinProperties = &n
			} else {
				s.MaxProperties = &n
			}
		default:
			if lower {
				s.MinItems = &n
			} else {
				s.MaxItems = &n
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if t == durationType {
			return // a duration's rule parameter is "1s", not a number
		}
		x, err := strconv.ParseFloat(param, 64)
		if err != nil {
			return
		}
		switch {
		case lower && exclusive:
			s.ExclusiveMinimum = &x
		case lower:
			s.Minimum = &x
		case exclusive:
			s.ExclusiveMaximum = &x
		default:
			s.Maximum = &x
		}
	}
}

// parseValue is a tag's text (a default, an example, an enum member) as a JSON
// value of t's kind; ok is false when it is not one.
func parseValue(t reflect.Type, v string) (any, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType || t == timeType {
		return v, true
	}
	switch t.Kind() {
	case reflect.Bool:
		b, err := strconv.ParseBool(v)
		return b, err == nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(v, 10, 64)
		return n, err == nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(v, 10, 64)
		return n, err == nil
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(v, 64)
		return n, err == nil
	case reflect.String:
		return v, true
	case reflect.Slice, reflect.Array:
		var out []any
		for _, e := range strings.Split(v, ",") {
			x, ok := parseValue(t.Elem(), e)
			if !ok {
				return nil, false
			}
			out = append(out, x)
		}
		return out, true
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return v, true
	}
	return nil, false
}

// paramSchema is the schema of a value Bind converts from text (query, header,
// path parameter, form field) into a field of type t.
func (g *registry) paramSchema(t reflect.Type) *Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return &Schema{Type: "string", Description: "a Go duration (time.ParseDuration): 300ms, 1.5h, 2h45m"}
	case t == timeType:
		return &Schema{Type: "string", Format: "date-time"}
	case t == fileHeaderType:
		return &Schema{Type: "string", Format: "binary"}
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return &Schema{Type: "string"} // the text's bytes
	case t.Kind() == reflect.Slice:
		return &Schema{Type: "array", Items: g.paramSchema(t.Elem())}
	case t.Kind() != reflect.String && reflect.PointerTo(t).Implements(textUnmarshalerType):
		return &Schema{Type: "string"}
	}
	return g.schemaOf(t, modeIn)
}

func ptr[T any](v T) *T { return &v }
