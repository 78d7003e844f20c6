package celeris

import (
	"mime/multipart"
	"reflect"
	"testing"
)

type bindInfoPaging struct {
	Page int `query:"page" default:"1"`
}

type bindInfoIn struct {
	bindInfoPaging
	ID     string                `param:"id"`
	Token  string                `header:"X-Token"`
	Name   string                `form:"name" query:"name"`
	Upload *multipart.FileHeader `form:"upload"`
	Body   string                `json:"body"`
	hidden string                `query:"hidden"`
}

func TestBindFields(t *testing.T) {
	_ = bindInfoIn{}.hidden
	got := BindFields(reflect.TypeFor[*bindInfoIn]())
	want := []BindField{
		{Name: "Page", Index: []int{0, 0}, Type: reflect.TypeFor[int](), Query: "page", Default: "1", HasDefault: true},
		{Name: "ID", Index: []int{1}, Type: reflect.TypeFor[string](), Param: "id"},
		{Name: "Token", Index: []int{2}, Type: reflect.TypeFor[string](), Header: "X-Token"},
		{Name: "Name", Index: []int{3}, Type: reflect.TypeFor[string](), Query: "name", Form: "name"},
		{Name: "Upload", Index: []int{4}, Type: reflect.TypeFor[*multipart.FileHeader](), Form: "upload", File: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("BindFields:\n got %+v\nwant %+v", got, want)
	}
	if BindFields(reflect.TypeFor[int]()) != nil {
		t.Fatal("BindFields(int) is not nil")
	}
}
