package openapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/openapi"
)

type playground struct{ v *validator.Validate }

func (p playground) Validate(v any) error { return p.v.Struct(v) }

type Paging struct {
	Page  int `query:"page" default:"1" validate:"min=1" doc:"page number"`
	Limit int `query:"limit" default:"20" validate:"min=1,max=100"`
}

type ListUsersIn struct {
	Paging
	Role  string   `query:"role" validate:"omitempty,oneof=admin member 'read only'"`
	Tags  []string `query:"tag" validate:"dive,alpha"`
	Trace string   `header:"X-Trace-Id" validate:"omitempty,uuid"`
}

type GetUserIn struct {
	ID int64 `param:"id" validate:"gt=0"`
}

type CreateUserIn struct {
	Org   string   `param:"org"`
	Name  string   `json:"name" validate:"required,min=2,max=40" example:"Ada"`
	Email string   `json:"email" validate:"required,email"`
	Age   int      `json:"age,omitempty" validate:"omitempty,gte=0,lte=150"`
	Langs []string `json:"langs,omitempty" validate:"max=5,dive,len=2"`
	Code  string   `json:"code,omitempty" pattern:"^[A-Z]{3}$"`
}

type Address struct {
	City string `json:"city"`
}

type User struct {
	ID      int64     `json:"id"`
	Name    string    `json:"name"`
	Email   string    `json:"email,omitempty"`
	Created time.Time `json:"created"`
	Home    *Address  `json:"home,omitempty"`
	Friends []User    `json:"friends,omitempty"`
}

type UserList struct {
	Users []User `json:"users"`
	Page  int    `json:"page"`
}

func newAPI(t *testing.T) (*openapi.API, string) {
	t.Helper()
	var api *openapi.API
	_, addr := celeristest.Serve(t, celeris.Config{Validator: playground{validator.New()}}, func(s *celeris.Server) {
		api = openapi.New(s, openapi.Info{Title: "Users", Version: "1.2.3"})
		api.SecurityScheme("bearer", openapi.BearerJWT())
		api.SecurityScheme("key", openapi.APIKey("query:api_key"))
		api.SecurityScheme("session", openapi.SessionCookie(""))
		openapi.Get(api, "/users", func(c *celeris.Context, in *ListUsersIn) (*UserList, error) {
			return &UserList{Users: []User{{ID: 1, Name: in.Role + strings.Join(in.Tags, "+")}}, Page: in.Page}, nil
		}, openapi.Summary("List users"), openapi.Tags("users"), openapi.Errors(429))
		openapi.Get(api, "/users/:id", func(c *celeris.Context, in *GetUserIn) (*User, error) {
			if in.ID == 404 {
				return nil, celeris.NewHTTPError(http.StatusNotFound, "no such user")
			}
			if in.ID == 204 {
				return nil, nil
			}
			return &User{ID: in.ID, Name: "Ada"}, nil
		}, openapi.Summary("Get a user"), openapi.Errors(404), openapi.Security("bearer", "users:read"))
		g := s.Group("/orgs/:org")
		openapi.Post(api.On(g), "/users", func(c *celeris.Context, in *CreateUserIn) (*User, error) {
			return &User{ID: 7, Name: in.Org + "/" + in.Name, Email: in.Email}, nil
		}, openapi.Status(http.StatusCreated), openapi.Security("key"), openapi.Security("session"), openapi.Deprecated())
		s.GET("/health", func(c *celeris.Context) error { return c.String(200, "ok") })
		api.Describe("GET", "/health", openapi.Summary("Health"),
			openapi.Returns(200, "text/plain", "alive", nil))
		api.ServeJSON(s, "/openapi.json")
		api.ServeYAML(s, "/openapi.yaml")
		api.ServeDocs(s, "/docs", "/openapi.json")
	})
	return api, "http://" + addr
}

func get(t *testing.T, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	res, err := http.DefaultTransport.RoundTrip(req) // no transparent gzip
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

// TestTypedRoutes: typed routes bind and validate their input with Bind and
// answer their output as JSON, over a socket with net/http's client.
func TestTypedRoutes(t *testing.T) {
	_, base := newAPI(t)
	tests := []struct {
		name, method, path, ct, body string
		code                         int
		want                         string // a substring of the body
	}{
		{name: "defaults", method: "GET", path: "/users", code: 200, want: `"page":1`},
		{name: "query", method: "GET", path: "/users?page=3&role=admin&tag=a&tag=b", code: 200, want: `"name":"admina+b"`},
		{name: "oneof fails", method: "GET", path: "/users?role=root", code: 400, want: "role must satisfy oneof"},
		{name: "dive fails", method: "GET", path: "/users?tag=a1", code: 400, want: "tag[0] must satisfy alpha"},
		{name: "max fails", method: "GET", path: "/users?limit=101", code: 400, want: "limit must satisfy max=100"},
		{name: "not an int", method: "GET", path: "/users?page=x", code: 400, want: `page (query): invalid integer "x"`},
		{name: "path", method: "GET", path: "/users/42", code: 200, want: `"id":42`},
		{name: "gt fails", method: "GET", path: "/users/0", code: 400, want: "must satisfy gt=0"},
		{name: "handler error", method: "GET", path: "/users/404", code: 404, want: "no such user"},
		{name: "nil output", method: "GET", path: "/users/204", code: 204},
		{name: "json body", method: "POST", path: "/orgs/acme/users", ct: "application/json",
			body: `{"name":"Ada","email":"ada@example.com"}`, code: 201, want: `"name":"acme/Ada"`},
		{name: "required", method: "POST", path: "/orgs/acme/users", ct: "application/json",
			body: `{"email":"ada@example.com"}`, code: 400, want: "name is required"},
		{name: "malformed json", method: "POST", path: "/orgs/acme/users", ct: "application/json", body: `{`, code: 400},
		{name: "not json", method: "POST", path: "/orgs/acme/users", ct: "text/plain", body: `x`, code: 415},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
			if tt.ct != "" {
				req.Header.Set("Content-Type", tt.ct)
			}
			res, b := do(t, req)
			if res.StatusCode != tt.code || !strings.Contains(string(b), tt.want) {
				t.Fatalf("%d %s, want %d with %q", res.StatusCode, b, tt.code, tt.want)
			}
			if tt.code < 300 && tt.code != 204 && res.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("Content-Type %q", res.Header.Get("Content-Type"))
			}
		})
	}
}

// TestDocument: the document says what the routes do: parameters from the
// Bind tags, constraints from the validate rules, defaults and examples,
// components, security and the error answers.
func TestDocument(t *testing.T) {
	_, base := newAPI(t)
	res, b := get(t, base+"/openapi.json")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		path string
		want any
	}{
		{"openapi", "3.1.0"},
		{"info.version", "1.2.3"},
		{"paths./users.get.summary", "List users"},
		{"paths./users.get.operationId", "getUsers"},
		{"paths./users.get.parameters.0.name", "page"},
		{"paths./users.get.parameters.0.in", "query"},
		{"paths./users.get.parameters.0.description", "page number"},
		{"paths./users.get.parameters.0.schema.default", 1.0},
		{"paths./users.get.parameters.0.schema.minimum", 1.0},
		{"paths./users.get.parameters.1.schema.maximum", 100.0},
		{"paths./users.get.parameters.2.schema.enum", []any{"admin", "member", "read only"}},
		{"paths./users.get.parameters.3.schema.type", "array"},
		{"paths./users.get.parameters.3.schema.items.pattern", "^[a-zA-Z]+$"},
		{"paths./users.get.parameters.4.in", "header"},
		{"paths./users.get.parameters.4.schema.format", "uuid"},
		{"paths./users.get.responses.200.content.application/json.schema.$ref", "#/components/schemas/UserList"},
		{"paths./users.get.responses.400.$ref", "#/components/responses/BadRequest"},
		{"paths./users.get.responses.429.$ref", "#/components/responses/TooManyRequests"},
		{"paths./users/{id}.get.parameters.0.in", "path"},
		{"paths./users/{id}.get.parameters.0.required", true},
		{"paths./users/{id}.get.parameters.0.schema.exclusiveMinimum", 0.0},
		{"paths./users/{id}.get.security.0.bearer", []any{"users:read"}},
		{"paths./users/{id}.get.responses.401.$ref", "#/components/responses/Unauthorized"},
		{"paths./users/{id}.get.responses.403.$ref", "#/components/responses/Forbidden"},
		{"paths./users/{id}.get.responses.404.$ref", "#/components/responses/NotFound"},
		{"paths./orgs/{org}/users.post.deprecated", true},
		{"paths./orgs/{org}/users.post.parameters.0.name", "org"},
		{"paths./orgs/{org}/users.post.responses.201.content.application/json.schema.$ref", "#/components/schemas/User"},
		{"paths./orgs/{org}/users.post.responses.413.$ref", "#/components/responses/ContentTooLarge"},
		{"paths./orgs/{org}/users.post.responses.415.$ref", "#/components/responses/UnsupportedMediaType"},
		{"paths./orgs/{org}/users.post.security.1.session", []any{}},
		{"paths./orgs/{org}/users.post.requestBody.required", true},
		{"paths./orgs/{org}/users.post.requestBody.content.application/json.schema.required", []any{"name", "email"}},
		{"paths./orgs/{org}/users.post.requestBody.content.application/json.schema.properties.name.minLength", 2.0},
		{"paths./orgs/{org}/users.post.requestBody.content.application/json.schema.properties.name.maxLength", 40.0},
		{"paths./orgs/{org}/users.post.requestBody.content.application/json.schema.properties.name.examples", []any{"Ada"}},
		{"paths./orgs/{org}/users.post.requestBody.content.application/json.schema.properties.email.format", "email"},
		{"paths./orgs/{org}/users.post.requestBody.content.application/json.schema.properties.age.maximum", 150.0},
		{"paths./orgs/{org}/users.post.requestBody.content.application/json.schema.properties.langs.maxItems", 5.0},
		{"paths./orgs/{org}/users.post.requestBody.content.application/json.schema.properties.langs.items.minLength", 2.0},
		{"paths./orgs/{org}/users.post.requestBody.content.application/json.schema.properties.code.pattern", "^[A-Z]{3}$"},
		{"paths./health.get.responses.200.content.text/plain.schema.type", "string"},
		{"components.schemas.User.required", []any{"id", "name", "created"}},
		{"components.schemas.User.properties.created.format", "date-time"},
		{"components.schemas.User.properties.home.$ref", "#/components/schemas/Address"},
		{"components.schemas.User.properties.friends.items.$ref", "#/components/schemas/User"},
		{"components.securitySchemes.bearer.scheme", "bearer"},
		{"components.securitySchemes.key.in", "query"},
		{"components.securitySchemes.key.name", "api_key"},
		{"components.securitySchemes.session.in", "cookie"},
		{"components.responses.BadRequest.content.text/plain.schema.type", "string"},
		{"paths./docs.get.operationId", "getDocs"},
		{"paths./openapi.yaml.get.summary", "This API's OpenAPI 3.1 description (YAML)"},
	}
	for _, c := range checks {
		got, ok := lookup(doc, c.path)
		if !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s = %#v (found %v), want %#v", c.path, got, ok, c.want)
		}
	}
	if _, ok := lookup(doc, "paths./users.get.requestBody"); ok {
		t.Error("GET /users has a request body")
	}
	if _, ok := lookup(doc, "paths./users.get.parameters.5"); ok {
		t.Error("GET /users has more than 5 parameters")
	}

	// YAML: the same document.
	res, y := get(t, base+"/openapi.yaml")
	if res.StatusCode != 200 || !bytes.Contains(y, []byte("openapi: 3.1.0")) || !bytes.Contains(y, []byte("/orgs/{org}/users:")) {
		t.Fatalf("YAML: %d %.200s", res.StatusCode, y)
	}
}

// lookup follows a dotted path ("paths./users.get") through maps and lists; a
// key may contain dots when the whole rest does not match.
func lookup(v any, path string) (any, bool) {
	if path == "" {
		return v, true
	}
	switch x := v.(type) {
	case map[string]any:
		// The longest key that prefixes path.
		parts := strings.Split(path, ".")
		for n := len(parts); n >= 1; n-- {
			key := strings.Join(parts[:n], ".")
			if sub, ok := x[key]; ok {
				if got, ok := lookup(sub, strings.Join(parts[n:], ".")); ok {
					return got, true
				}
			}
		}
	case []any:
		head, rest, _ := strings.Cut(path, ".")
		for i := range x {
			if head == itoa(i) {
				return lookup(x[i], rest)
			}
		}
	}
	return nil, false
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestDocsAssets: the docs page and its embedded script and style, gzip for a
// client that accepts it, plain for one that does not.
func TestDocsAssets(t *testing.T) {
	_, base := newAPI(t)
	res, page := get(t, base+"/docs")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
		!bytes.Contains(page, []byte(`src="/docs/swagger-ui-bundle.js"`)) || !bytes.Contains(page, []byte(`url: "/openapi.json"`)) {
		t.Fatalf("%d %s", res.StatusCode, page)
	}
	if bytes.Contains(page, []byte("http://")) || bytes.Contains(page, []byte("https://")) {
		t.Fatalf("the page names another origin: %s", page)
	}
	for _, name := range []string{"swagger-ui-bundle.js", "swagger-ui.css"} {
		res, gz := get(t, base+"/docs/"+name, "Accept-Encoding", "gzip")
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("%s: %d, Content-Encoding %q", name, res.StatusCode, res.Header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		unz, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		res, plain := get(t, base+"/docs/"+name, "Accept-Encoding", "gzip;q=0, identity")
		if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != "" || !bytes.Equal(plain, unz) || len(plain) < 100000 {
			t.Fatalf("%s plain: %d, %d bytes, Content-Encoding %q", name, res.StatusCode, len(plain), res.Header.Get("Content-Encoding"))
		}
	}
}

// TestRegistrationPanics: an input that is not a struct, or has a field Bind
// cannot convert, panics at registration.
func TestRegistrationPanics(t *testing.T) {
	s := celeris.New(celeris.Config{})
	api := openapi.New(s, openapi.Info{})
	type bad struct {
		C chan int `query:"c"`
	}
	for name, f := range map[string]func(){
		"not a struct": func() {
			openapi.Get(api, "/a", func(c *celeris.Context, in *int) (*User, error) { return nil, nil })
		},
		"unsupported field": func() {
			openapi.Get(api, "/b", func(c *celeris.Context, in *bad) (*User, error) { return nil, nil })
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
