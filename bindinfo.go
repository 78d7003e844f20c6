package celeris

import "reflect"

// BindField describes one struct field that Bind fills from the query, a form,
// a header or a path parameter, or gives a default: what a description of the
// request (an OpenAPI document, a generated client) needs to say about it. A
// JSON body is decoded with encoding/json and follows its rules (json tags), so
// fields read only from JSON are not listed.
type BindField struct {
	// Name is the field's Go name; Index its index path from the struct
	// (reflect.Value.FieldByIndex), through embedded structs.
	Name  string
	Index []int
	// Type is the field's Go type.
	Type reflect.Type
	// Query, Form, Header and Param are the field's names in each source, ""
	// where it has no tag of that source.
	Query, Form, Header, Param string
	// Default is the `default` tag's text, HasDefault whether the field has one.
	Default    string
	HasDefault bool
	// File is true for a form file field (*multipart.FileHeader or
	// []*multipart.FileHeader).
	File bool
}

// BindFields lists the fields that Bind reads for struct type t (a pointer to a
// struct is taken as the struct), in field order, embedded structs walked, as
// Bind's own plan for t has them. It panics, as Bind does, when a tagged field
// has a type Bind cannot convert, and returns nil when t is not a struct. The
// plan is built once per type and cached; the slice returned is the caller's.
func BindFields(t reflect.Type) []BindField {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	p := planFor(t)
	out := make([]BindField, 0, len(p.fields))
	for i := range p.fields {
		f := &p.fields[i]
		bf := BindField{
			Name:  f.goName,
			Index: append([]int(nil), f.index...),
			Type:  t.FieldByIndex(f.index).Type,
			Query: f.names[0], Form: f.names[1], Header: f.names[2], Param: f.names[3],
			File: f.file != 0,
		}
		if f.def != nil {
			bf.Default, bf.HasDefault = f.def[0], true
		}
		out = append(out, bf)
	}
	return out
}
