package router

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// This file holds a deliberately simple reference router, written from the package
// doc rather than from the tree, and the fuzz targets that hold the tree to it.

// refMatch matches path against pattern segment by segment. On a match it returns
// the parameters and the kind of each pattern segment (0 static, 1 param, 2 wildcard).
func refMatch(pattern, path string) (params []Param, kinds []int, ok bool) {
	if !strings.HasPrefix(path, "/") {
		return nil, nil, false
	}
	psegs := strings.Split(pattern[1:], "/")
	xsegs := strings.Split(path[1:], "/")
	for i, seg := range psegs {
		if strings.HasPrefix(seg, "*") {
			if i >= len(xsegs) {
				return nil, nil, false
			}
			params = append(params, Param{Key: seg[1:], Value: strings.Join(xsegs[i:], "/")})
			return params, append(kinds, 2), true
		}
		if i >= len(xsegs) {
			return nil, nil, false
		}
		if strings.HasPrefix(seg, ":") {
			if xsegs[i] == "" {
				return nil, nil, false
			}
			params = append(params, Param{Key: seg[1:], Value: xsegs[i]})
			kinds = append(kinds, 1)
			continue
		}
		if seg != xsegs[i] {
			return nil, nil, false
		}
		kinds = append(kinds, 0)
	}
	if len(psegs) != len(xsegs) {
		return nil, nil, false
	}
	return params, kinds, true
}

// refBest returns the best route of method matching path: the least segment-kind
// sequence (static < param < wildcard, left to right).
func refBest(routes [][2]string, method, path string) (handler string, params []Param, ok bool) {
	var bestKinds []int
	for _, rt := range routes {
		if rt[0] != method {
			continue
		}
		p, kinds, m := refMatch(rt[1], path)
		if !m {
			continue
		}
		if ok && !kindsLess(kinds, bestKinds) {
			continue
		}
		handler, params, bestKinds, ok = rt[0]+" "+rt[1], p, kinds, true
	}
	return handler, params, ok
}

func kindsLess(a, b []int) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return len(a) < len(b)
}

// refLookup is the reference for Router.Lookup.
func refLookup(routes [][2]string, method, path string) (handler string, params []Param, res Result, allow string) {
	if h, p, ok := refBest(routes, method, path); ok {
		return h, p, Found, ""
	}
	if method == "HEAD" {
		if h, p, ok := refBest(routes, "GET", path); ok {
			return h, p, Found, ""
		}
	}
	set := map[string]bool{}
	for _, rt := range routes {
		if rt[0] == method {
			continue
		}
		if _, _, ok := refMatch(rt[1], path); ok {
			set[rt[0]] = true
		}
	}
	if len(set) == 0 {
		return "", nil, NotFound, ""
	}
	if set["GET"] {
		set["HEAD"] = true
	}
	var ms []string
	for m := range set {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	return "", nil, MethodNotAllowed, strings.Join(ms, ", ")
}

// refValid reports whether pattern is well formed (package doc, Patterns).
func refValid(pattern string) bool {
	if !strings.HasPrefix(pattern, "/") || strings.ContainsAny(pattern, "{}") {
		return false // braces are net/http's and chi's syntax: refused, not taken literally
	}
	segs := strings.Split(pattern[1:], "/")
	names := map[string]bool{}
	for i, seg := range segs {
		if strings.ContainsAny(seg, ":*") {
			if seg[0] != ':' && seg[0] != '*' {
				return false
			}
			name := seg[1:]
			if name == "" || strings.ContainsAny(name, ":*") || names[name] {
				return false
			}
			for _, c := range name { // letters, digits and '_' (":b?" is refused)
				if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
					return false
				}
			}
			if seg[0] == '*' && i != len(segs)-1 {
				return false
			}
			names[name] = true
		}
	}
	return true
}

// refClash reports whether registering q after p (same method, both valid) must
// panic: identical patterns, or at the first differing segment both have a parameter
// (or both a wildcard) under different names.
func refClash(p, q string) bool {
	ps, qs := strings.Split(p[1:], "/"), strings.Split(q[1:], "/")
	for i := 0; i < len(ps) && i < len(qs); i++ {
		if ps[i] == qs[i] {
			continue
		}
		a, b := ps[i][:min(1, len(ps[i]))], qs[i][:min(1, len(qs[i]))]
		return a == b && (a == ":" || a == "*")
	}
	return len(ps) == len(qs)
}

// concretePath derives a path that pattern matches: ":name" becomes "v-name" and
// "*name" becomes "w/name".
func concretePath(pattern string) string {
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		switch {
		case strings.HasPrefix(s, ":"):
			segs[i] = "v-" + s[1:]
		case strings.HasPrefix(s, "*"):
			segs[i] = "w/" + s[1:]
		}
	}
	return strings.Join(segs, "/")
}

// checkLookup compares one Lookup with the reference and checks that every
// parameter value is a substring of path.
func checkLookup(t *testing.T, r *Router[string], routes [][2]string, method, path string) {
	t.Helper()
	var p Params
	h, res, allow := r.Lookup(method, path, &p)
	wantH, wantPs, wantRes, wantAllow := refLookup(routes, method, path)
	if res != wantRes || h != wantH || allow != wantAllow {
		t.Fatalf("Lookup(%q, %q) = %q %v %q; reference %q %v %q", method, path, h, res, allow, wantH, wantRes, wantAllow)
	}
	got := paramsOf(&p)
	if fmt.Sprint(got) != fmt.Sprint(wantPs) {
		t.Fatalf("Lookup(%q, %q) params %q; reference %q", method, path, got, wantPs)
	}
	for _, kv := range got {
		if !strings.Contains(path, kv.Value) {
			t.Fatalf("Lookup(%q, %q): param %v not a substring of the path", method, path, kv)
		}
	}
}

var fuzzMethods = []string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PROPFIND", "PATCH", "BREW"}

func FuzzLookup(f *testing.F) {
	for _, rt := range append(append([][2]string{}, tableRoutes...), githubRoutes...) {
		f.Add(uint8(0), concretePath(rt[1]))
		f.Add(uint8(1), rt[1])
	}
	for _, s := range []string{"", "/", "//", "/users/new/x", "/static/", "/files/", "/users/42/posts/",
		"/repos/o/r/git/refs/", "/en/docs/intr", "/a/b/c/d/e/f/g/h/i/j/k/l"} {
		f.Add(uint8(2), s)
	}
	table := newTableRouter(f, tableRoutes)
	github := newTableRouter(f, githubRoutes)
	f.Fuzz(func(t *testing.T, m uint8, path string) {
		method := fuzzMethods[int(m)%len(fuzzMethods)]
		checkLookup(t, table, tableRoutes, method, path)
		checkLookup(t, github, githubRoutes, method, path)
	})
}

func FuzzAdd(f *testing.F) {
	seeds := [][2]string{
		{"/users/:id", "/users/:name"},
		{"/users/:id", "/users/new"},
		{"/static/*fp", "/static/*other"},
		{"/static/*fp", "/static/:p"},
		{"/a:b", "/"},
		{"/:a/:a", "/x/*"},
		{"/a/*b/c", "/a//b"},
		{"/users/:id/posts/:postId", "/users/:id/*rest"},
		{"/users", "/users"},
		{"users", "/:"},
		{"/abc/def", "/abd/:x/e"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], true)
		f.Add(s[0], s[1], false)
	}
	f.Fuzz(func(t *testing.T, p1, p2 string, sameMethod bool) {
		m2 := "GET"
		if !sameMethod {
			m2 = "POST"
		}
		// Start from the table routes so that the new patterns meet a real tree.
		r := newTableRouter(t, tableRoutes)
		added := append([][2]string{}, tableRoutes...)
		for _, rt := range [][2]string{{"GET", p1}, {m2, p2}} {
			method, pattern := rt[0], rt[1]
			wantPanic := !refValid(pattern)
			for _, a := range added {
				if !wantPanic && a[0] == method && refClash(a[1], pattern) {
					wantPanic = true
				}
			}
			msg, panicked := func() (msg string, panicked bool) {
				defer func() {
					if v := recover(); v != nil {
						msg, panicked = fmt.Sprint(v), true
					}
				}()
				r.Add(method, pattern, method+" "+pattern)
				return "", false
			}()
			if panicked != wantPanic {
				t.Fatalf("Add(%q, %q): panicked %v (%q), want %v", method, pattern, panicked, msg, wantPanic)
			}
			if panicked {
				if !strings.Contains(msg, pattern) {
					t.Fatalf("Add(%q, %q): panic %q does not name the pattern", method, pattern, msg)
				}
				continue
			}
			added = append(added, rt)
		}
		if fmt.Sprint(r.Routes()) != fmt.Sprint(added) {
			t.Fatalf("Routes() = %q, want %q", r.Routes(), added)
		}
		for _, rt := range added[len(tableRoutes):] {
			path := concretePath(rt[1])
			checkLookup(t, r, added, rt[0], path)
			if _, res, _ := r.Lookup(rt[0], path, nil); res != Found {
				t.Fatalf("Lookup(%q, %q) for pattern %q: %v", rt[0], path, rt[1], res)
			}
			for _, m := range fuzzMethods {
				checkLookup(t, r, added, m, path)
			}
		}
	})
}
