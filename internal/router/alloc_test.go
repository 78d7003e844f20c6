//go:build !race

package router

import "testing"

// TestLookupAllocs is the router's allocation budget: a lookup allocates nothing,
// whatever its result (DESIGN.md, Memory).
func TestLookupAllocs(t *testing.T) {
	r := New[int]()
	for i, rt := range allocRoutes {
		r.Add(rt[0], rt[1], i)
	}
	var p Params
	for _, tt := range []struct {
		name, method, path string
		res                Result
	}{
		{name: "static", method: "GET", path: "/health", res: Found},
		{name: "two params", method: "GET", path: "/users/42/posts/7", res: Found},
		{name: "wildcard", method: "GET", path: "/static/css/site.css", res: Found},
		{name: "HEAD to GET", method: "HEAD", path: "/users/42", res: Found},
		{name: "405", method: "POST", path: "/users/42", res: MethodNotAllowed},
		{name: "404", method: "GET", path: "/nope/nope", res: NotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var res Result
			allocs := testing.AllocsPerRun(1000, func() {
				_, res, _ = r.Lookup(tt.method, tt.path, &p)
			})
			if res != tt.res {
				t.Fatalf("result %v, want %v", res, tt.res)
			}
			if allocs != 0 {
				t.Errorf("Lookup(%q, %q): %v allocs/op, want 0", tt.method, tt.path, allocs)
			}
		})
	}
}
