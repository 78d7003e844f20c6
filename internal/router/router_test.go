package router

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// tableRoutes is the route set of the table tests and of FuzzLookup.
var tableRoutes = [][2]string{
	{"GET", "/"},
	{"GET", "/users"},
	{"POST", "/users"},
	{"OPTIONS", "/users"},
	{"GET", "/users/new"},
	{"GET", "/users/newest"},
	{"GET", "/users/:id"},
	{"PUT", "/users/:id"},
	{"DELETE", "/users/:id"},
	{"GET", "/users/:id/x"},
	{"GET", "/users/:id/posts/:postId"},
	{"GET", "/users/:id/*rest"},
	{"GET", "/static/*filepath"},
	{"GET", "/static/special"},
	{"GET", "/files/:name"},
	{"GET", "/files/*rest"},
	{"GET", "/a"},
	{"GET", "/a/"},
	{"GET", "/search/:q/"},
	{"GET", "/:lang/docs"},
	{"GET", "/en/docs/intro"},
	{"HEAD", "/head-only"},
	{"PROPFIND", "/dav/*path"},
	{"GET", "/u/:a/:b/:c/:d/:e/:f/:g/:h/:i/:j"},
}

// newTableRouter registers routes with the pattern itself as the handler.
func newTableRouter(t testing.TB, routes [][2]string) *Router[string] {
	t.Helper()
	r := New[string]()
	for _, rt := range routes {
		r.Add(rt[0], rt[1], rt[0]+" "+rt[1])
	}
	return r
}

// ps builds an expected parameter list from key, value pairs.
func ps(kv ...string) []Param {
	var out []Param
	for i := 0; i < len(kv); i += 2 {
		out = append(out, Param{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func paramsOf(p *Params) []Param {
	var out []Param
	for i := 0; i < p.Len(); i++ {
		out = append(out, p.At(i))
	}
	return out
}

func TestLookup(t *testing.T) {
	r := newTableRouter(t, tableRoutes)
	tests := []struct {
		method, path string
		res          Result
		handler      string // on Found
		params       []Param
		allow        string // on MethodNotAllowed
	}{
		// static
		{method: "GET", path: "/", res: Found, handler: "GET /"},
		{method: "GET", path: "/users", res: Found, handler: "GET /users"},
		{method: "POST", path: "/users", res: Found, handler: "POST /users"},
		{method: "GET", path: "/users/new", res: Found, handler: "GET /users/new"},
		{method: "GET", path: "/users/newest", res: Found, handler: "GET /users/newest"},
		{method: "GET", path: "/a", res: Found, handler: "GET /a"},
		{method: "GET", path: "/a/", res: Found, handler: "GET /a/"},
		{method: "GET", path: "/en/docs/intro", res: Found, handler: "GET /en/docs/intro"},

		// params
		{method: "GET", path: "/users/42", res: Found, handler: "GET /users/:id", params: ps("id", "42")},
		{method: "GET", path: "/users/ne", res: Found, handler: "GET /users/:id", params: ps("id", "ne")},
		{method: "GET", path: "/users/newer", res: Found, handler: "GET /users/:id", params: ps("id", "newer")},
		{method: "GET", path: "/users/newestx", res: Found, handler: "GET /users/:id", params: ps("id", "newestx")},
		{method: "PUT", path: "/users/42", res: Found, handler: "PUT /users/:id", params: ps("id", "42")},
		{method: "GET", path: "/users/42/posts/7", res: Found, handler: "GET /users/:id/posts/:postId",
			params: ps("id", "42", "postId", "7")},
		{method: "GET", path: "/search/go/", res: Found, handler: "GET /search/:q/", params: ps("q", "go")},
		{method: "GET", path: "/en/docs", res: Found, handler: "GET /:lang/docs", params: ps("lang", "en")},
		{method: "GET", path: "/fr/docs", res: Found, handler: "GET /:lang/docs", params: ps("lang", "fr")},
		{method: "GET", path: "/u/1/2/3/4/5/6/7/8/9/10", res: Found, handler: "GET /u/:a/:b/:c/:d/:e/:f/:g/:h/:i/:j",
			params: ps("a", "1", "b", "2", "c", "3", "d", "4", "e", "5", "f", "6", "g", "7", "h", "8", "i", "9", "j", "10")},

		// wildcards
		{method: "GET", path: "/static/", res: Found, handler: "GET /static/*filepath", params: ps("filepath", "")},
		{method: "GET", path: "/static/a/b.css", res: Found, handler: "GET /static/*filepath", params: ps("filepath", "a/b.css")},
		{method: "GET", path: "/static/special", res: Found, handler: "GET /static/special"},
		{method: "GET", path: "/static/special/x", res: Found, handler: "GET /static/*filepath", params: ps("filepath", "special/x")},
		{method: "GET", path: "/static/specia", res: Found, handler: "GET /static/*filepath", params: ps("filepath", "specia")},
		{method: "GET", path: "/static//", res: Found, handler: "GET /static/*filepath", params: ps("filepath", "/")},
		{method: "PROPFIND", path: "/dav/x/y", res: Found, handler: "PROPFIND /dav/*path", params: ps("path", "x/y")},

		// param and wildcard at the same position: param first
		{method: "GET", path: "/files/a", res: Found, handler: "GET /files/:name", params: ps("name", "a")},
		{method: "GET", path: "/files/a/b", res: Found, handler: "GET /files/*rest", params: ps("rest", "a/b")},
		{method: "GET", path: "/files/", res: Found, handler: "GET /files/*rest", params: ps("rest", "")},

		// priority and backtracking
		{method: "GET", path: "/users/new/x", res: Found, handler: "GET /users/:id/x", params: ps("id", "new")},
		{method: "GET", path: "/users/newest/posts/1", res: Found, handler: "GET /users/:id/posts/:postId",
			params: ps("id", "newest", "postId", "1")},
		{method: "GET", path: "/users/new/other", res: Found, handler: "GET /users/:id/*rest", params: ps("id", "new", "rest", "other")},
		{method: "GET", path: "/users/42/posts", res: Found, handler: "GET /users/:id/*rest", params: ps("id", "42", "rest", "posts")},
		{method: "GET", path: "/users/42/", res: Found, handler: "GET /users/:id/*rest", params: ps("id", "42", "rest", "")},
		{method: "GET", path: "/en/docs/intr", res: NotFound},
		{method: "GET", path: "/users/users", res: Found, handler: "GET /users/:id", params: ps("id", "users")},

		// 404
		{method: "GET", path: "/nope", res: NotFound},
		{method: "GET", path: "", res: NotFound},
		{method: "GET", path: "users", res: NotFound},
		{method: "GET", path: "/static", res: NotFound},
		{method: "GET", path: "/users/", res: NotFound},
		{method: "GET", path: "//users", res: NotFound},
		{method: "GET", path: "/search/go", res: NotFound},
		{method: "GET", path: "/search//", res: NotFound},
		{method: "GET", path: "/u/1/2/3/4/5/6/7/8/9", res: NotFound},
		{method: "POST", path: "/nope", res: NotFound},

		// 405 with Allow
		{method: "POST", path: "/users/42", res: MethodNotAllowed, allow: "DELETE, GET, HEAD, PUT"},
		{method: "DELETE", path: "/users", res: MethodNotAllowed, allow: "GET, HEAD, OPTIONS, POST"},
		{method: "BREW", path: "/users", res: MethodNotAllowed, allow: "GET, HEAD, OPTIONS, POST"},
		{method: "POST", path: "/users/new", res: MethodNotAllowed, allow: "DELETE, GET, HEAD, PUT"},
		{method: "GET", path: "/head-only", res: MethodNotAllowed, allow: "HEAD"},
		{method: "GET", path: "/dav/", res: MethodNotAllowed, allow: "PROPFIND"},
		{method: "POST", path: "/static/x", res: MethodNotAllowed, allow: "GET, HEAD"},
		{method: "PROPFIND", path: "/", res: MethodNotAllowed, allow: "GET, HEAD"},

		// HEAD falls back to GET
		{method: "HEAD", path: "/users/42", res: Found, handler: "GET /users/:id", params: ps("id", "42")},
		{method: "HEAD", path: "/static/x", res: Found, handler: "GET /static/*filepath", params: ps("filepath", "x")},
		{method: "HEAD", path: "/head-only", res: Found, handler: "HEAD /head-only"},
		{method: "HEAD", path: "/dav/x", res: MethodNotAllowed, allow: "PROPFIND"},
		{method: "HEAD", path: "/nope", res: NotFound},
	}
	var p Params
	p.push("stale", "value") // Lookup must reset it
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			h, res, allow := r.Lookup(tt.method, tt.path, &p)
			if res != tt.res {
				t.Fatalf("result = %v, want %v (handler %q)", res, tt.res, h)
			}
			if res == Found && h != tt.handler {
				t.Errorf("handler = %q, want %q", h, tt.handler)
			}
			if res != Found && h != "" {
				t.Errorf("handler = %q on %v, want zero", h, res)
			}
			if got := paramsOf(&p); fmt.Sprint(got) != fmt.Sprint(tt.params) {
				t.Errorf("params = %v, want %v", got, tt.params)
			}
			if allow != tt.allow {
				t.Errorf("allow = %q, want %q", allow, tt.allow)
			}
			for _, kv := range tt.params {
				if v, ok := p.Get(kv.Key); !ok || v != kv.Value {
					t.Errorf("Get(%q) = %q, %v; want %q", kv.Key, v, ok, kv.Value)
				}
			}
			// The reference matcher agrees.
			wantH, wantPs, wantRes, wantAllow := refLookup(tableRoutes, tt.method, tt.path)
			if res != wantRes || (res == Found && h != wantH) || allow != wantAllow ||
				fmt.Sprint(paramsOf(&p)) != fmt.Sprint(wantPs) {
				t.Errorf("reference says %q %v %v %q", wantH, wantPs, wantRes, wantAllow)
			}
			// A nil Params is allowed.
			if h2, res2, allow2 := r.Lookup(tt.method, tt.path, nil); h2 != h || res2 != res || allow2 != allow {
				t.Errorf("with nil Params: %q %v %q", h2, res2, allow2)
			}
		})
	}
}

func TestParams(t *testing.T) {
	var p Params
	if p.Len() != 0 {
		t.Fatal("zero Params not empty")
	}
	if _, ok := p.Get("x"); ok {
		t.Fatal("Get on empty Params found x")
	}
	for i := 0; i < 12; i++ {
		p.push(fmt.Sprint("k", i), fmt.Sprint("v", i))
	}
	if p.Len() != 12 {
		t.Fatalf("Len = %d, want 12", p.Len())
	}
	for i := 0; i < 12; i++ {
		if got := p.At(i); got.Key != fmt.Sprint("k", i) || got.Value != fmt.Sprint("v", i) {
			t.Errorf("At(%d) = %v", i, got)
		}
		if v, ok := p.Get(fmt.Sprint("k", i)); !ok || v != fmt.Sprint("v", i) {
			t.Errorf("Get(k%d) = %q, %v", i, v, ok)
		}
	}
	p.truncate(10)
	if p.Len() != 10 || len(p.extra) != 2 {
		t.Fatalf("after truncate(10): Len %d, extra %d", p.Len(), len(p.extra))
	}
	p.truncate(3)
	if p.Len() != 3 || len(p.extra) != 0 || p.inline[3] != (Param{}) {
		t.Fatalf("after truncate(3): Len %d, extra %d, inline[3] %v", p.Len(), len(p.extra), p.inline[3])
	}
	p.Reset()
	if p.Len() != 0 || p.inline[0] != (Param{}) {
		t.Fatal("Reset did not clear")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("At(0) on empty Params did not panic")
			}
		}()
		p.At(0)
	}()
}

func TestAddPanics(t *testing.T) {
	tests := []struct {
		name     string
		before   [][2]string // registered first, must succeed
		method   string
		pattern  string
		contains string // besides the pattern
	}{
		{name: "no leading slash", method: "GET", pattern: "users", contains: "must start with '/'"},
		{name: "empty", method: "GET", pattern: "", contains: "must start with '/'"},
		{name: "empty param name", method: "GET", pattern: "/users/:", contains: "empty parameter name"},
		{name: "empty param name mid", method: "GET", pattern: "/users/:/x", contains: "empty parameter name"},
		{name: "empty wildcard name", method: "GET", pattern: "/static/*", contains: "empty parameter name"},
		{name: "wildcard not last", method: "GET", pattern: "/static/*fp/x", contains: "last segment"},
		{name: "duplicate names", method: "GET", pattern: "/a/:id/b/:id", contains: "duplicate parameter name id"},
		{name: "duplicate param and wildcard", method: "GET", pattern: "/a/:id/*id", contains: "duplicate parameter name id"},
		{name: "colon mid segment", method: "GET", pattern: "/a:b", contains: "must start a path segment"},
		{name: "colon in param name", method: "GET", pattern: "/a/:b:c", contains: "must start a path segment"},
		{name: "star mid segment", method: "GET", pattern: "/files*", contains: "must start a path segment"},
		{name: "star in param name", method: "GET", pattern: "/a/:b*", contains: "must start a path segment"},
		{name: "invalid method", method: "GE T", pattern: "/x", contains: "invalid method"},
		{name: "empty method", method: "", pattern: "/x", contains: "invalid method"},
		{name: "duplicate", before: [][2]string{{"GET", "/users"}}, method: "GET", pattern: "/users",
			contains: "duplicate registration"},
		{name: "duplicate param route", before: [][2]string{{"GET", "/users/:id"}}, method: "GET", pattern: "/users/:id",
			contains: "duplicate registration"},
		{name: "duplicate wildcard route", before: [][2]string{{"GET", "/s/*p"}}, method: "GET", pattern: "/s/*p",
			contains: "duplicate registration"},
		{name: "param names conflict", before: [][2]string{{"GET", "/users/:id"}}, method: "GET", pattern: "/users/:name",
			contains: `:name conflicts with :id of "/users/:id"`},
		{name: "param names conflict deeper", before: [][2]string{{"GET", "/users/:id"}}, method: "GET", pattern: "/users/:name/posts",
			contains: `:name conflicts with :id of "/users/:id"`},
		{name: "wildcard names conflict", before: [][2]string{{"GET", "/s/*a"}}, method: "GET", pattern: "/s/*b",
			contains: `*b conflicts with *a of "/s/*a"`},
		// Other routers' syntax must not register a literal path: a route that
		// could never match would fail silently.
		{name: "brace param", method: "GET", pattern: "/users/{id}", contains: "use :name for a parameter"},
		{name: "brace wildcard", method: "GET", pattern: "/files/{path...}", contains: "use :name for a parameter"},
		{name: "optional param", method: "GET", pattern: "/a/:b?", contains: "invalid parameter name b? "},
		{name: "regexp param", method: "GET", pattern: "/a/:id<[0-9]+>", contains: "parameter name"},
		{name: "dotted param", method: "GET", pattern: "/f/:name.json", contains: "parameter name"},
		{name: "root param conflict", before: [][2]string{{"GET", "/:a"}}, method: "GET", pattern: "/:b/c",
			contains: "conflicts with :a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTableRouter(t, tt.before)
			msg := func() (msg string) {
				defer func() {
					v := recover()
					if v == nil {
						t.Fatalf("Add(%q, %q) did not panic", tt.method, tt.pattern)
					}
					msg, _ = v.(string)
				}()
				r.Add(tt.method, tt.pattern, "new")
				return ""
			}()
			if !strings.Contains(msg, `"`+tt.pattern+`"`) || !strings.Contains(msg, tt.contains) {
				t.Errorf("panic %q does not name the pattern %q and contain %q", msg, tt.pattern, tt.contains)
			}
			// A failed Add changes nothing.
			if got := r.Routes(); len(got) != len(tt.before) {
				t.Errorf("Routes after failed Add = %v", got)
			}
			for _, rt := range tt.before {
				h, res, _ := r.Lookup(rt[0], concretePath(rt[1]), nil)
				if res != Found || h != rt[0]+" "+rt[1] {
					t.Errorf("after failed Add, %s %s -> %q %v", rt[0], rt[1], h, res)
				}
			}
		})
	}
}

func TestAddAllowed(t *testing.T) {
	// Combinations that must register without panicking.
	r := newTableRouter(t, [][2]string{
		{"GET", "/users/:id"},
		{"DELETE", "/users/:uid"}, // names are per method tree
		{"GET", "/users/new"},
		{"GET", "/users/*rest"}, // param and wildcard at the same position
		{"GET", "/users/:id/"},
		{"GET", "/a//b"},
		{"GET", "/semi;colon/x.y~z"},
		{"get", "/users"}, // methods are case-sensitive tokens
		{"M-SEARCH", "/"},
	})
	if _, res, _ := r.Lookup("DELETE", "/users/7", nil); res != Found {
		t.Errorf("DELETE /users/7: %v", res)
	}
	var p Params
	if h, _, _ := r.Lookup("DELETE", "/users/7", &p); h != "DELETE /users/:uid" || p.At(0).Key != "uid" {
		t.Errorf("DELETE /users/7 -> %q %v", h, paramsOf(&p))
	}
	if _, res, allow := r.Lookup("GET", "/", nil); res != MethodNotAllowed || allow != "M-SEARCH" {
		t.Errorf("GET / -> %v %q", res, allow)
	}
	if h, _, _ := r.Lookup("GET", "/a//b", nil); h != "GET /a//b" {
		t.Errorf("GET /a//b -> %q", h)
	}
}

func TestRoutes(t *testing.T) {
	r := newTableRouter(t, tableRoutes)
	got := r.Routes()
	if fmt.Sprint(got) != fmt.Sprint(tableRoutes) {
		t.Fatalf("Routes() = %v\nwant %v", got, tableRoutes)
	}
	got[0][1] = "changed"
	if r.Routes()[0][1] != "/" {
		t.Fatal("Routes() shares its slice")
	}
}

func TestGitHubRoutes(t *testing.T) {
	r := newTableRouter(t, githubRoutes)
	if len(r.Routes()) != len(githubRoutes) {
		t.Fatalf("%d routes, want %d", len(r.Routes()), len(githubRoutes))
	}
	var p Params
	for _, rt := range githubRoutes {
		path := concretePath(rt[1])
		h, res, _ := r.Lookup(rt[0], path, &p)
		if res != Found || h != rt[0]+" "+rt[1] {
			t.Errorf("%s %s (%s) -> %q %v", rt[0], rt[1], path, h, res)
			continue
		}
		_, wantPs, _, _ := refLookup(githubRoutes, rt[0], path)
		if fmt.Sprint(paramsOf(&p)) != fmt.Sprint(wantPs) {
			t.Errorf("%s %s: params %v, want %v", rt[0], path, paramsOf(&p), wantPs)
		}
	}
	// A few specific paths, including 405s and priority between siblings.
	for _, tt := range []struct{ method, path, want, allow string }{
		{method: "GET", path: "/repos/julienschmidt/httprouter/stargazers", want: "GET /repos/:owner/:repo/stargazers"},
		{method: "GET", path: "/repos/o/r/zipball/main", want: "GET /repos/:owner/:repo/:archive_format/:ref"},
		{method: "GET", path: "/repos/o/r/git/refs/heads/main", want: "GET /repos/:owner/:repo/git/refs/*ref"},
		{method: "GET", path: "/repos/o/r/git/refs", want: "GET /repos/:owner/:repo/git/refs"},
		{method: "GET", path: "/user/repos", want: "GET /user/repos"},
		{method: "GET", path: "/users/gopher", want: "GET /users/:user"},
		{method: "POST", path: "/repos/o/r/issues/1", allow: "GET, HEAD, PATCH"},
		{method: "PUT", path: "/user/keys/3", allow: "DELETE, GET, HEAD, PATCH"},
		{method: "GET", path: "/markdown", allow: "POST"},
	} {
		h, res, allow := r.Lookup(tt.method, tt.path, &p)
		if h != tt.want || allow != tt.allow || (tt.want != "") != (res == Found) {
			t.Errorf("%s %s -> %q %v %q; want %q %q", tt.method, tt.path, h, res, allow, tt.want, tt.allow)
		}
	}
}

func TestConcurrentLookup(t *testing.T) {
	r := newTableRouter(t, githubRoutes)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var p Params
			for i := 0; i < 200; i++ {
				rt := githubRoutes[(g*31+i)%len(githubRoutes)]
				if _, res, _ := r.Lookup(rt[0], concretePath(rt[1]), &p); res != Found {
					t.Errorf("%s %s: %v", rt[0], rt[1], res)
					return
				}
				if _, res, allow := r.Lookup("TRACE", concretePath(rt[1]), &p); res != MethodNotAllowed || allow == "" {
					t.Errorf("TRACE %s: %v %q", rt[1], res, allow)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestResultString(t *testing.T) {
	for r, want := range map[Result]string{Found: "Found", NotFound: "NotFound", MethodNotAllowed: "MethodNotAllowed", 9: "Result(?)"} {
		if r.String() != want {
			t.Errorf("%d.String() = %q", r, r.String())
		}
	}
}

// AllowOptions lists OPTIONS in the Allow value of an OPTIONS lookup (the caller
// answers it); other lookups' Allow values list the routes' methods only.
func TestAllowOptions(t *testing.T) {
	for _, tt := range []struct {
		name, method string
		on           bool
		allow        string
	}{
		{name: "off", method: "OPTIONS", on: false, allow: "GET, HEAD, POST"},
		{name: "on", method: "OPTIONS", on: true, allow: "GET, HEAD, OPTIONS, POST"},
		{name: "on, other method", method: "DELETE", on: true, allow: "GET, HEAD, POST"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := New[string]()
			r.AllowOptions = tt.on
			r.Add("GET", "/x", "g")
			r.Add("POST", "/x", "p")
			_, res, allow := r.Lookup(tt.method, "/x", nil)
			if res != MethodNotAllowed || allow != tt.allow {
				t.Fatalf("%v %q, want MethodNotAllowed %q", res, allow, tt.allow)
			}
		})
	}
}
