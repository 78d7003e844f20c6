package celeris

// Validation: Config.Validator's errors as typed fields.
//
// Bind, BindJSON and Validate run the validator on the bound value; its error is
// split into FieldErrors (validationFields): a slice of field errors
// (go-playground's ValidationErrors), a join, or a *BindError. Each field error's
// methods, where it has them, give the rule and its parameter (Tag, Param), the
// value (Value) and the Go path (StructNamespace), which requestName maps to the
// field's name in the request through the struct's tags. The 400 *HTTPError's
// message is built from those names; its Err, a *BindError, keeps them typed and
// unwraps to the validator's own error.

import (
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
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
