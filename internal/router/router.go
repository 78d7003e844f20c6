// Package router is Celeris's request router: a radix tree per HTTP method that maps
// a path to a handler value without allocating. It is pure (standard library only, no
// I/O).
//
// # Patterns
//
// A pattern is a path starting with '/' whose segments are literal text, a parameter
// ":name" (one non-empty segment, no '/') or, as the last segment only, a wildcard
// "*name" (the rest of the path, possibly empty: "/static/*filepath" matches
// "/static/" with filepath "" and "/static/a/b.css" with filepath "a/b.css"). ':' and
// '*' are special only at the start of a segment and are rejected anywhere else
// ("/a:b" panics), so a pattern can never mean two things. Parameter names are
// letters, digits and '_'; '{' and '}' panic (other routers' "/users/{id}" is not a
// literal here). Paths are matched as given: no cleaning, no trailing-slash
// redirect, "/a" and "/a/" are distinct.
//
// # The tree
//
// Each method has its own tree (a short slice of method -> tree, common methods
// first, scanned linearly). A node holds a literal prefix and up to three kinds of
// children: static children keyed by the first byte of their prefix (prefixes are
// split byte-wise, as in httprouter), one parameter child and one wildcard child. The
// last two hang only from nodes that end right after a '/', i.e. at a segment start.
// A node where a pattern ends holds the index of its route.
//
// # Matching priority
//
// At every segment, static beats parameter beats wildcard, and the search backtracks:
// with "/users/new" and "/users/:id/x" registered, "/users/new/x" first descends
// into "new", finds no "/x" there, undoes that choice and matches ":id" = "new". The
// walk is depth-first in priority order, so the first route found is the best one.
// Equivalently, of all patterns that match a path, the winner is the one whose
// segment kinds (static < param < wildcard), read left to right, are least.
//
// # Method fallbacks
//
// HEAD uses the GET route when no HEAD route matches. When no route of the request's
// method matches but routes of other methods do, Lookup reports MethodNotAllowed with
// the Allow value (RFC 9110 §15.5.6 requires it on a 405): the sorted,
// comma-separated list of those methods, with HEAD whenever GET is there. The string
// for each set of methods is built once and cached, so a 405 does not allocate.
//
// # Concurrency
//
// Add is for setup: it must not run concurrently with itself or with Lookup. Once
// registration is done, Lookup and Routes are safe for concurrent use.
package router

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Result is the outcome of a Lookup.
type Result uint8

const (
	// Found: a route matched; the handler and parameters are set.
	Found Result = iota
	// NotFound: no route of any method matches the path.
	NotFound
	// MethodNotAllowed: routes of other methods match the path; allow lists them.
	MethodNotAllowed
)

// String returns the result's name.
func (r Result) String() string {
	switch r {
	case Found:
		return "Found"
	case NotFound:
		return "NotFound"
	case MethodNotAllowed:
		return "MethodNotAllowed"
	}
	return "Result(?)"
}

// maxMethods bounds the distinct methods of one router: the Allow set is a bit mask.
const maxMethods = 63

// optionsBit marks an Allow mask built for an OPTIONS lookup with AllowOptions
// (the bit no method has).
const optionsBit = 1 << 63

// maxAllowCache bounds the cached Allow strings. Which method sets occur is fixed by
// the route set (not by requests), so this is only a backstop; past it a 405 builds
// its string each time.
const maxAllowCache = 1024

// methodTree is the tree of one method.
type methodTree struct {
	method string
	root   *node
	bit    uint8 // bit of this method in an Allow mask; fixed at creation
}

// route is one registration.
type route[H any] struct {
	method, pattern string
	h               H
}

// Router maps (method, path) to a value of type H. The zero value is not usable; use
// New. Add registers routes during setup; afterwards Lookup is safe for concurrent
// use (see the package doc).
type Router[H any] struct {
	trees  []methodTree // common methods first; owned by the registering goroutine
	routes []route[H]   // registration order; node.route indexes it

	allowMu sync.Mutex                        // serialises writers of allow
	allow   atomic.Pointer[map[uint64]string] // copy-on-write Allow cache: mask -> value

	// AllowOptions adds OPTIONS to the Allow value of an OPTIONS lookup that
	// finds no OPTIONS route: the caller answers that request itself. Set it
	// during setup, before the first Lookup.
	AllowOptions bool
}

// New returns an empty router.
func New[H any]() *Router[H] {
	return &Router[H]{}
}

// methodRank orders the trees so that the linear scan meets common methods first.
func methodRank(m string) int {
	switch m {
	case "GET":
		return 0
	case "POST":
		return 1
	case "PUT":
		return 2
	case "DELETE":
		return 3
	case "PATCH":
		return 4
	case "HEAD":
		return 5
	case "OPTIONS":
		return 6
	}
	return 7
}

// tree returns the tree of method, or nil.
func (r *Router[H]) tree(method string) *node {
	for i := range r.trees {
		if r.trees[i].method == method {
			return r.trees[i].root
		}
	}
	return nil
}

// Add registers pattern for method with handler h. It panics, with a message naming
// the method and pattern, on programmer errors: an invalid method token, a malformed
// pattern (see the package doc), a parameter or wildcard whose name differs from the
// one already registered at the same position in this method's tree, and a duplicate
// method+pattern. A panicking Add leaves the router unchanged.
//
// Parameter names are checked per method: "GET /users/:id" and
// "DELETE /users/:uid" may coexist, because each method has its own tree.
func (r *Router[H]) Add(method, pattern string, h H) {
	fail := func(reason string) {
		panic("router: " + method + " \"" + pattern + "\": " + reason)
	}
	if !validMethod(method) {
		fail("invalid method")
	}
	toks, reason := parsePattern(pattern)
	if reason != "" {
		fail(reason)
	}
	root := r.tree(method)
	if root == nil {
		if len(r.trees) >= maxMethods {
			fail("too many distinct methods")
		}
		root = &node{}
	}
	if end := root.find(toks, fail); end != nil && end.route != 0 {
		fail("duplicate registration")
	}
	// Checks done: nothing below panics.
	if r.tree(method) == nil {
		r.addTree(method, root)
	}
	r.routes = append(r.routes, route[H]{method: method, pattern: pattern, h: h})
	root.insert(toks, pattern).route = int32(len(r.routes))
}

// addTree inserts a new method tree, keeping common methods first.
func (r *Router[H]) addTree(method string, root *node) {
	t := methodTree{method: method, root: root, bit: uint8(len(r.trees))}
	i := len(r.trees)
	for i > 0 && methodRank(r.trees[i-1].method) > methodRank(method) {
		i--
	}
	r.trees = append(r.trees, methodTree{})
	copy(r.trees[i+1:], r.trees[i:])
	r.trees[i] = t
}

// Lookup finds the handler for method and path. It resets ps (which may be nil when
// the caller needs no parameters) and, on Found, fills it with the parameters, whose
// values are substrings of path (valid as long as path is). On MethodNotAllowed,
// allow is the Allow header value; it is a shared string, not to be modified. Lookup
// does not allocate.
func (r *Router[H]) Lookup(method, path string, ps *Params) (h H, res Result, allow string) {
	ps.Reset()
	if root := r.tree(method); root != nil {
		if n := root.match(path, ps); n != nil {
			return r.routes[n.route-1].h, Found, ""
		}
		ps.Reset()
	}
	if method == "HEAD" {
		if root := r.tree("GET"); root != nil {
			if n := root.match(path, ps); n != nil {
				return r.routes[n.route-1].h, Found, ""
			}
			ps.Reset()
		}
	}
	var mask uint64
	for i := range r.trees {
		t := &r.trees[i]
		if t.method == method || method == "HEAD" && t.method == "GET" {
			continue // already tried
		}
		if t.root.match(path, nil) != nil {
			mask |= 1 << t.bit
		}
	}
	if mask == 0 {
		return h, NotFound, ""
	}
	if method == "OPTIONS" && r.AllowOptions {
		mask |= optionsBit
	}
	return h, MethodNotAllowed, r.allowValue(mask)
}

// allowValue returns the cached Allow value for a mask of method bits, building and
// caching it on first use.
func (r *Router[H]) allowValue(mask uint64) string {
	if m := r.allow.Load(); m != nil {
		if s, ok := (*m)[mask]; ok {
			return s
		}
	}
	s := r.buildAllow(mask)
	r.allowMu.Lock()
	defer r.allowMu.Unlock()
	old := r.allow.Load()
	if old != nil && len(*old) >= maxAllowCache {
		return s
	}
	m := make(map[uint64]string, 1+lenMap(old))
	if old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[mask] = s
	r.allow.Store(&m)
	return s
}

func lenMap(m *map[uint64]string) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// buildAllow builds the Allow value of a method mask: the methods sorted and joined
// by ", ", plus HEAD when GET is present (GET routes serve HEAD, RFC 9110 §9.3.2)
// and OPTIONS for optionsBit.
func (r *Router[H]) buildAllow(mask uint64) string {
	var ms []string
	hasHead, hasGet, hasOptions := false, false, false
	for i := range r.trees {
		t := &r.trees[i]
		if mask&(1<<t.bit) == 0 {
			continue
		}
		ms = append(ms, t.method)
		hasHead = hasHead || t.method == "HEAD"
		hasGet = hasGet || t.method == "GET"
		hasOptions = hasOptions || t.method == "OPTIONS"
	}
	if hasGet && !hasHead {
		ms = append(ms, "HEAD")
	}
	if mask&optionsBit != 0 && !hasOptions {
		ms = append(ms, "OPTIONS")
	}
	sort.Strings(ms)
	return strings.Join(ms, ", ")
}

// Routes returns the registered (method, pattern) pairs in registration order. The
// slice is a fresh copy.
func (r *Router[H]) Routes() [][2]string {
	out := make([][2]string, len(r.routes))
	for i, rt := range r.routes {
		out[i] = [2]string{rt.method, rt.pattern}
	}
	return out
}
