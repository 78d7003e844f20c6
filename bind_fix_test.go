package celeris

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// pgFieldError is shaped like go-playground's validator.FieldError.
type pgFieldError struct {
	ns, field, tag, param string
	value                 any
}

func (e pgFieldError) Field() string           { return e.field }
func (e pgFieldError) StructNamespace() string { return e.ns }
func (e pgFieldError) Tag() string             { return e.tag }
func (e pgFieldError) Param() string           { return e.param }
func (e pgFieldError) Value() any              { return e.value }
func (e pgFieldError) Error() string {
	return "Key: '" + e.ns + "' Error:Field validation for '" + e.field + "' failed on the '" + e.tag + "' tag"
}

// pgErrors is shaped like validator.ValidationErrors.
type pgErrors []pgFieldError

func (e pgErrors) Error() string { return "validation failed" }

type pgItem struct {
	Name string `json:"name"`
}

type pgTodo struct {
	Title string   `json:"title"`
	Prio  int      `query:"prio"`
	Items []pgItem `json:"items"`
	Note  string
}

type pgValidator struct{}

func (pgValidator) Validate(v any) error {
	t, ok := v.(*pgTodo)
	if !ok {
		return nil
	}
	var errs pgErrors
	if t.Title == "" {
		errs = append(errs, pgFieldError{ns: "pgTodo.Title", field: "Title", tag: "required", value: t.Title})
	}
	if t.Prio > 5 {
		errs = append(errs, pgFieldError{ns: "pgTodo.Prio", field: "Prio", tag: "lte", param: "5", value: t.Prio})
	}
	for i, it := range t.Items {
		if len(it.Name) < 2 {
			errs = append(errs, pgFieldError{ns: "pgTodo.Items[" + string(rune('0'+i)) + "].Name", field: "Name", tag: "min", param: "2", value: it.Name})
		}
	}
	if t.Note == "x" {
		errs = append(errs, pgFieldError{ns: "pgTodo.Note", field: "Note", tag: "ne", param: "x", value: t.Note})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// TestValidationErrorsTyped: a validator's field errors keep their rule, parameter
// and value, are named by their request tags, and the validator's own error stays
// reachable with errors.As; the default message uses the tag names.
func TestValidationErrorsTyped(t *testing.T) {
	errc := make(chan error, 1)
	_, addr := startServer(t, Config{Validator: pgValidator{}, ErrorHandler: func(c *Context, err error) {
		errc <- err
		DefaultErrorHandler(c, err)
	}}, func(s *Server) {
		s.POST("/bind", func(c *Context) error {
			var in pgTodo
			return c.Bind(&in)
		})
		s.POST("/json", func(c *Context) error {
			var in pgTodo
			return c.BindJSON(&in)
		})
	})
	body := `{"title":"","items":[{"name":"ok"},{"name":"a"}],"Note":"x"}`
	wantFields := []FieldError{
		{Field: "title", StructField: "Title", Source: "validate", Rule: "required"},
		{Field: "prio", StructField: "Prio", Source: "validate", Rule: "lte", Param: "5", Value: "9"},
		{Field: "items[1].name", StructField: "Items[1].Name", Source: "validate", Rule: "min", Param: "2", Value: "a"},
		{Field: "Note", StructField: "Note", Source: "validate", Rule: "ne", Param: "x", Value: "x"},
	}
	wantMsg := "invalid request: title is required; prio must satisfy lte=5; items[1].name must satisfy min=2; Note must satisfy ne=x"
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		resp, err := cl.Post("http://"+addr+"/bind?prio=9", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := bodyString(t, resp); resp.StatusCode != 400 || got != wantMsg {
			t.Errorf("body %d %q\nwant %q", resp.StatusCode, got, wantMsg)
		}
		got := <-errc
		var be *BindError
		if !errors.As(got, &be) || len(be.Fields) != len(wantFields) {
			t.Fatalf("error %#v", got)
		}
		for i, w := range wantFields {
			f := be.Fields[i]
			f.Err = nil
			if f != w {
				t.Errorf("field %d: %+v\nwant %+v", i, f, w)
			}
		}
		var pe pgErrors
		if !errors.As(got, &pe) || len(pe) != 4 {
			t.Errorf("errors.As to the validator's error: %v", got)
		}
		var fe pgFieldError
		if !errors.As(be.Fields[1], &fe) || fe.Tag() != "lte" {
			t.Errorf("errors.As to the field's error: %v", be.Fields[1])
		}
		if n := strings.Count(got.Error(), "prio must satisfy"); n != 1 {
			t.Errorf("Error() names prio %d times: %q", n, got.Error())
		}
	})
}

// TestBindJSONValidates: BindJSON runs Config.Validator as every other Bind does.
func TestBindJSONValidates(t *testing.T) {
	_, addr := startServer(t, Config{Validator: pgValidator{}}, func(s *Server) {
		s.POST("/json", func(c *Context) error {
			var in pgTodo
			if err := c.BindJSON(&in); err != nil {
				return err
			}
			return c.String(200, in.Title)
		})
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		tests := []struct {
			name, body, want string
			code             int
		}{
			{name: "invalid", body: `{"title":""}`, code: 400, want: "invalid request: title is required"},
			{name: "valid", body: `{"title":"T"}`, code: 200, want: "T"},
			{name: "malformed", body: `{"title":`, code: 400, want: "malformed JSON body: unexpected end of JSON input"},
		}
		for _, tt := range tests {
			resp, err := cl.Post("http://"+addr+"/json", "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := bodyString(t, resp); resp.StatusCode != tt.code || got != tt.want {
				t.Errorf("%s: %d %q, want %d %q", tt.name, resp.StatusCode, got, tt.code, tt.want)
			}
		}
	})
}

// TestBindUnknownContentType: a body Bind cannot read is refused with 415, not
// skipped; a request without body binds.
func TestBindUnknownContentType(t *testing.T) {
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.Any("/", func(c *Context) error {
			var in pgTodo
			if err := c.Bind(&in); err != nil {
				return err
			}
			return c.String(200, "prio="+string(rune('0'+in.Prio))+" title="+in.Title)
		})
	})
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		tests := []struct {
			name, method, ct, body, want string
			code                         int
		}{
			{name: "xml", method: "POST", ct: "application/xml", body: "<a/>", code: 415},
			{name: "text", method: "PUT", ct: "text/plain", body: "title=T", code: 415},
			{name: "no type", method: "POST", body: `{"title":"T"}`, code: 415},
			{name: "json", method: "POST", ct: "application/json", body: `{"title":"T"}`, code: 200, want: "prio=3 title=T"},
			{name: "form", method: "POST", ct: "application/x-www-form-urlencoded", body: "a=b", code: 200, want: "prio=3 title="},
			{name: "no body", method: "GET", code: 200, want: "prio=3 title="},
			{name: "no body with type", method: "POST", ct: "text/plain", code: 200, want: "prio=3 title="},
		}
		for _, tt := range tests {
			var rd *strings.Reader
			if tt.body != "" {
				rd = strings.NewReader(tt.body)
			}
			req, _ := http.NewRequest(tt.method, "http://"+addr+"/?prio=3", nil)
			if rd != nil {
				req, _ = http.NewRequest(tt.method, "http://"+addr+"/?prio=3", rd)
			}
			if tt.ct != "" {
				req.Header.Set("Content-Type", tt.ct)
			}
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got := bodyString(t, resp)
			if resp.StatusCode != tt.code || (tt.want != "" && got != tt.want) {
				t.Errorf("%s: %d %q, want %d %q", tt.name, resp.StatusCode, got, tt.code, tt.want)
			}
		}
	})
}

// TestBindEmptyValues: ?debug is true for a bool field, as QueryBool says; an
// empty value keeps the field's default instead of failing its conversion.
func TestBindEmptyValues(t *testing.T) {
	type opts struct {
		Debug   bool    `query:"debug"`
		Verbose *bool   `query:"v"`
		Flags   []bool  `query:"f"`
		Limit   int     `query:"limit" default:"10"`
		Sort    string  `query:"sort" default:"id"`
		Ratio   float64 `query:"ratio"`
		Count   int     `form:"count" default:"3"`
		Region  string  `header:"X-Region" default:"eu"`
	}
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.Any("/", func(c *Context) error {
			var o opts
			if err := c.Bind(&o); err != nil {
				return err
			}
			v := "nil"
			if o.Verbose != nil {
				v = map[bool]string{true: "true", false: "false"}[*o.Verbose]
			}
			b, _ := json.Marshal(o.Flags)
			return c.String(200, strings.Join([]string{
				map[bool]string{true: "debug", false: "nodebug"}[o.Debug], "v=" + v, "f=" + string(b),
				"limit=" + strconv.Itoa(o.Limit), "sort=" + o.Sort, "ratio=" + strconv.Itoa(int(o.Ratio)), "count=" + strconv.Itoa(o.Count),
				"region=" + o.Region, "qb=" + map[bool]string{true: "true", false: "false"}[c.QueryBool("debug", false)],
			}, " "))
		})
	})
	tests := []struct{ name, target, form, want string }{
		{name: "key without value", target: "/?debug&v&f&f", want: "debug v=true f=[true,true] limit=10 sort=id ratio=0 count=3 region=eu qb=true"},
		{name: "empty values", target: "/?debug=&limit=&sort=&ratio=", want: "debug v=nil f=null limit=10 sort=id ratio=0 count=3 region=eu qb=true"},
		{name: "explicit", target: "/?debug=false&v=false&limit=5&sort=name&ratio=2", want: "nodebug v=false f=null limit=5 sort=name ratio=2 count=3 region=eu qb=false"},
		{name: "empty form field", target: "/", form: "count=", want: "nodebug v=nil f=null limit=10 sort=id ratio=0 count=3 region=eu qb=false"},
		{name: "form field", target: "/", form: "count=7", want: "nodebug v=nil f=null limit=10 sort=id ratio=0 count=7 region=eu qb=false"},
	}
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		for _, tt := range tests {
			req, _ := http.NewRequest("GET", "http://"+addr+tt.target, nil)
			if tt.form != "" {
				req, _ = http.NewRequest("POST", "http://"+addr+tt.target, strings.NewReader(tt.form))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			req.Header.Set("X-Region", "")
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := bodyString(t, resp); resp.StatusCode != 200 || got != tt.want {
				t.Errorf("%s: %d %q\nwant %q", tt.name, resp.StatusCode, got, tt.want)
			}
		}
	})
}

type rnInner struct {
	SKU  string            `json:"sku"`
	Tags map[string]string `form:"tags"`
}

type rnOuter struct {
	Paging
	Title  string             `json:"title,omitempty"`
	Hidden string             `json:"-" query:"h"`
	Plain  string             `json:",omitempty"`
	Items  []rnInner          `json:"items"`
	Ptr    *rnInner           `param:"ptr"`
	Grid   [][]rnInner        `json:"grid"`
	ByKey  map[string]rnInner `json:"by_key"`
}

// TestRequestName: a validator's Go path maps to the request's names, element by
// element; a path that names no field is not mapped.
func TestRequestName(t *testing.T) {
	tests := []struct {
		path, want string
		ok         bool
	}{
		{path: "Title", want: "title", ok: true},
		{path: "Hidden", want: "h", ok: true},
		{path: "Plain", want: "Plain", ok: true},
		{path: "Paging.Page", want: "page", ok: true},
		{path: "Paging", want: "Paging", ok: true},
		{path: "Title.", want: ""},
		{path: ".Title", want: ""},
		{path: "Page", want: "page", ok: true},
		{path: "Items[3].SKU", want: "items[3].sku", ok: true},
		{path: "Ptr.SKU", want: "ptr.sku", ok: true},
		{path: "Ptr.Tags[k]", want: "ptr.tags[k]", ok: true},
		{path: "Grid[1][2].SKU", want: "grid[1][2].sku", ok: true},
		{path: "ByKey[a].SKU", want: "by_key[a].sku", ok: true},
		{path: "Missing"},
		{path: "Title.X"},
		{path: "Title[0]"},
		{path: "Items[0][1]"},
		{path: ""},
	}
	for _, tt := range tests {
		got, ok := requestName(typeOf[rnOuter](), tt.path)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%q: %q %v, want %q %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzRequestName(f *testing.F) {
	for _, s := range []string{"Title", "Items[3].SKU", "Grid[1][2].SKU", "ByKey[a].SKU", "Ptr.Tags[k]", "..", "[", "Items[[", "Paging.Page"} {
		f.Add(s)
	}
	rt := typeOf[rnOuter]()
	f.Fuzz(func(t *testing.T, path string) {
		name, ok := requestName(rt, path)
		if !ok && name != "" {
			t.Fatalf("%q: %q without ok", path, name)
		}
		if ok && (name == "" || strings.Count(name, ".") > strings.Count(path, ".")) {
			t.Fatalf("%q: %q", path, name)
		}
	})
}

// TestBindGuideMessage: the conversion message docs/guide.md §15 shows is the one
// Bind gives (body fields first, then query, header and path parameters).
func TestBindGuideMessage(t *testing.T) {
	type in struct {
		Page  int   `query:"page"`
		Count uint8 `json:"count"`
	}
	_, addr := startServer(t, Config{}, func(s *Server) {
		s.POST("/", func(c *Context) error {
			var v in
			return c.Bind(&v)
		})
	})
	resp, err := http.Post("http://"+addr+"/?page=x", "application/json", strings.NewReader(`{"count":300}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `invalid request: count (json): cannot be a JSON number 300 (want uint8); page (query): invalid integer "x"`
	if got := bodyString(t, resp); resp.StatusCode != 400 || got != want {
		t.Errorf("%d %q, want %q", resp.StatusCode, got, want)
	}
}
