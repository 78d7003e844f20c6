package router

// node is one node of a method's radix tree. A node stands for the position reached
// after matching every prefix from the root down to it.
//
// A tree is built by Add and then only read: all fields are owned by the goroutine
// that registers routes, and are read-only (so safe for concurrent Lookups) once
// registration is done.
type node struct {
	prefix   string  // literal bytes this node matches; "" for the root and param nodes
	indices  string  // indices[i] is the first byte of children[i].prefix
	children []*node // static children, distinct first bytes
	param    *node   // ":name" child; only at a segment start (position after '/')
	wild     *node   // "*name" child; only at a segment start; always ends a route
	route    int32   // 1 + index of the route ending here in Router.routes; 0 if none

	name   string // parameter name of a param or wild node
	origin string // pattern that created this param or wild node (conflict messages)
}

// child returns the static child whose prefix starts with byte c, or nil.
func (n *node) child(c byte) *node {
	for i := 0; i < len(n.indices); i++ {
		if n.indices[i] == c {
			return n.children[i]
		}
	}
	return nil
}

// match returns the node where path ends on a route, or nil. path is what remains
// after n's prefix. Values of the parameters met on the way are pushed to ps (nil
// records nothing).
//
// At each node static children are tried first, then the param child, then the
// wildcard child; a branch that fails is undone (its parameters truncated) before the
// next is tried, so the search is a depth-first walk in priority order and its first
// hit is the highest-priority route. Nodes with no param or wildcard child have
// nothing to come back to, so the walk descends through them in a loop instead of
// recursing: recursion depth is bounded by the depth of the tree (the segments of
// the longest pattern), never by the length of a request's path. The work of a
// failing lookup is likewise bounded by the tree: at worst every node is visited
// once, since a node has one path from the root and each step along it consumes a
// fixed part of the request path (a literal, or one whole segment for a param).
func (n *node) match(path string, ps *Params) *node {
	for {
		if path == "" {
			if n.route != 0 {
				return n
			}
			if w := n.wild; w != nil { // "*name" matches the empty rest
				ps.push(w.name, "")
				return w
			}
			return nil
		}
		next := n.child(path[0])
		if next != nil && !hasPrefix(path, next.prefix) {
			next = nil
		}
		if n.param == nil && n.wild == nil {
			if next == nil {
				return nil
			}
			n, path = next, path[len(next.prefix):]
			continue
		}
		m := ps.mark()
		if next != nil {
			if r := next.match(path[len(next.prefix):], ps); r != nil {
				return r
			}
			ps.truncate(m)
		}
		if p := n.param; p != nil {
			// Segments are short: a plain loop beats IndexByte's call and setup.
			end := 0
			for end < len(path) && path[end] != '/' {
				end++
			}
			if end > 0 { // a param matches one non-empty segment
				ps.push(p.name, path[:end])
				if n.wild == nil {
					// Nothing left to try here: continue in the param node.
					n, path = p, path[end:]
					continue
				}
				if r := p.match(path[end:], ps); r != nil {
					return r
				}
				ps.truncate(m)
			}
		}
		if w := n.wild; w != nil {
			ps.push(w.name, path)
			return w
		}
		return nil
	}
}

// find walks the tree along toks without changing it and returns the node where the
// pattern would end, or nil if inserting it would create new nodes. It panics (via
// fail) when a parameter or wildcard conflicts with an existing one of another name
// at the same position, so that Add checks everything before it changes anything.
func (n *node) find(toks []token, fail func(string)) *node {
	for _, t := range toks {
		switch t.kind {
		case tokStatic:
			s := t.text
			for s != "" {
				c := n.child(s[0])
				if c == nil {
					return nil
				}
				l := commonPrefix(c.prefix, s)
				if l < len(c.prefix) {
					return nil // would split c: a new position
				}
				n, s = c, s[l:]
			}
		case tokParam:
			if n.param == nil {
				return nil
			}
			if n.param.name != t.text {
				fail("parameter :" + t.text + " conflicts with :" + n.param.name +
					" of \"" + n.param.origin + "\" at the same position")
			}
			n = n.param
		case tokWild:
			if n.wild == nil {
				return nil
			}
			if n.wild.name != t.text {
				fail("wildcard *" + t.text + " conflicts with *" + n.wild.name +
					" of \"" + n.wild.origin + "\" at the same position")
			}
			n = n.wild
		}
	}
	return n
}

// insert adds the nodes for toks (already checked by find) and returns the node where
// the pattern ends.
func (n *node) insert(toks []token, pattern string) *node {
	for _, t := range toks {
		switch t.kind {
		case tokStatic:
			n = n.insertStatic(t.text)
		case tokParam:
			if n.param == nil {
				n.param = &node{name: t.text, origin: pattern}
			}
			n = n.param
		case tokWild:
			if n.wild == nil {
				n.wild = &node{name: t.text, origin: pattern}
			}
			n = n.wild
		}
	}
	return n
}

// insertStatic descends from n along the literal s, splitting a node whose prefix
// diverges from s, and returns the node at the end of s.
func (n *node) insertStatic(s string) *node {
	for s != "" {
		c := n.child(s[0])
		if c == nil {
			c = &node{prefix: s}
			n.indices += s[:1]
			n.children = append(n.children, c)
			return c
		}
		l := commonPrefix(c.prefix, s)
		if l < len(c.prefix) {
			// Split c in place: its content moves to a new child holding the
			// rest of its prefix, so the parent's pointer to c stays valid.
			rest := new(node)
			*rest = *c
			rest.prefix = c.prefix[l:]
			*c = node{prefix: c.prefix[:l], indices: rest.prefix[:1], children: []*node{rest}}
		}
		n, s = c, s[l:]
	}
	return n
}

// hasPrefix reports whether s starts with prefix. Static prefixes are short and
// their first byte already matched (indices), so a byte loop beats memequal's call.
func hasPrefix(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 1; i < len(prefix); i++ {
		if s[i] != prefix[i] {
			return false
		}
	}
	return true
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}
