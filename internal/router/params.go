package router

// maxInline is how many parameters a Params stores without allocating.
const maxInline = 8

// Param is one path parameter. Key is the name from the pattern (without ':' or
// '*'). Value is a substring of the looked-up path: it is valid as long as that path
// string is (for the framework: until the handler returns, unless copied).
type Param struct {
	Key, Value string
}

// Params holds the parameters of one match, in pattern order. The first eight are
// stored inline, so a lookup fills a Params without allocating; a ninth and later
// parameter goes to an overflow slice whose capacity is kept across Reset.
//
// A Params is owned by one request at a time (the framework keeps it in its pooled
// Context); it is not safe for concurrent use. The zero value is empty and ready.
type Params struct {
	n      int              // number of parameters held
	inline [maxInline]Param // parameters 0..7
	extra  []Param          // parameters 8.. (only for patterns with more than 8)
}

// Get returns the value of the parameter named key and whether it exists. The value
// has the lifetime of the looked-up path (see Param).
func (p *Params) Get(key string) (string, bool) {
	in := p.inline[:min(p.n, maxInline)]
	for i := range in {
		if in[i].Key == key {
			return in[i].Value, true
		}
	}
	for i := range p.extra {
		if p.extra[i].Key == key {
			return p.extra[i].Value, true
		}
	}
	return "", false
}

// Len returns the number of parameters.
func (p *Params) Len() int { return p.n }

// At returns the i-th parameter in pattern order. It panics if i is out of range
// [0, Len()).
func (p *Params) At(i int) Param {
	if uint(i) >= uint(p.n) {
		panic("router: Params.At index out of range")
	}
	if i < maxInline {
		return p.inline[i]
	}
	return p.extra[i-maxInline]
}

// Reset empties p. It clears the strings it held so that a pooled Params does not
// keep an old request's path alive.
func (p *Params) Reset() {
	if p == nil || p.n == 0 {
		return
	}
	for i := range p.inline[:min(p.n, maxInline)] {
		p.inline[i].Key, p.inline[i].Value = "", "" // cheaper than clear for a few
	}
	if p.extra != nil {
		clear(p.extra)
		p.extra = p.extra[:0]
	}
	p.n = 0
}

// push appends a parameter. A nil p records nothing (used for the Allow scan).
func (p *Params) push(key, value string) {
	if p == nil {
		return
	}
	if p.n < maxInline {
		p.inline[p.n] = Param{Key: key, Value: value}
	} else {
		p.extra = append(p.extra, Param{Key: key, Value: value})
	}
	p.n++
}

// mark returns the current length, for truncate when a branch fails.
func (p *Params) mark() int {
	if p == nil {
		return 0
	}
	return p.n
}

// truncate drops the parameters pushed after mark m (backtracking).
func (p *Params) truncate(m int) {
	if p == nil || p.n == m {
		return
	}
	if p.n > maxInline {
		keep := max(m-maxInline, 0)
		clear(p.extra[keep:])
		p.extra = p.extra[:keep]
	}
	if m < maxInline {
		clear(p.inline[m:min(p.n, maxInline)])
	}
	p.n = m
}
