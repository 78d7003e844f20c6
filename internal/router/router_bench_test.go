package router

import "testing"

// allocRoutes is a small API route set for the benchmarks and the allocation budget (alloc_test.go).
var allocRoutes = [][2]string{
	{"GET", "/"},
	{"GET", "/health"},
	{"GET", "/users"},
	{"POST", "/users"},
	{"GET", "/users/:id"},
	{"PUT", "/users/:id"},
	{"DELETE", "/users/:id"},
	{"GET", "/users/:id/posts"},
	{"GET", "/users/:id/posts/:postId"},
	{"GET", "/static/*filepath"},
}

func BenchmarkLookup(b *testing.B) {
	r := New[int]()
	for i, rt := range allocRoutes {
		r.Add(rt[0], rt[1], i)
	}
	for _, bb := range []struct{ name, method, path string }{
		{name: "static", method: "GET", path: "/health"},
		{name: "param", method: "GET", path: "/users/42"},
		{name: "two_params", method: "GET", path: "/users/42/posts/7"},
		{name: "wildcard", method: "GET", path: "/static/css/site.css"},
		{name: "405", method: "POST", path: "/users/42"},
		{name: "404", method: "GET", path: "/nope/nope"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			var p Params
			b.ReportAllocs()
			for b.Loop() {
				r.Lookup(bb.method, bb.path, &p)
			}
		})
	}
}

func BenchmarkLookupGitHub(b *testing.B) {
	r := New[int]()
	for i, rt := range githubRoutes {
		r.Add(rt[0], rt[1], i)
	}
	for _, bb := range []struct{ name, method, path string }{
		{name: "static", method: "GET", path: "/user/repos"},
		{name: "param", method: "GET", path: "/repos/julienschmidt/httprouter/stargazers"},
		{name: "four_params", method: "GET", path: "/legacy/issues/search/o/r/open/bug"},
		{name: "wildcard", method: "GET", path: "/repos/o/r/contents/docs/guide/intro.md"},
		{name: "405", method: "POST", path: "/repos/o/r/issues/1"},
	} {
		b.Run(bb.name, func(b *testing.B) {
			var p Params
			b.ReportAllocs()
			for b.Loop() {
				r.Lookup(bb.method, bb.path, &p)
			}
		})
	}
	b.Run("all", func(b *testing.B) {
		paths := make([]string, len(githubRoutes))
		for i, rt := range githubRoutes {
			paths[i] = concretePath(rt[1])
		}
		var p Params
		b.ReportAllocs()
		for b.Loop() {
			for i, rt := range githubRoutes {
				r.Lookup(rt[0], paths[i], &p)
			}
		}
	})
}
