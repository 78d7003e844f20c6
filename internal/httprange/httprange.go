// Package httprange parses Range header values (RFC 9110 §14.1.2) for a
// representation of known size: Context.File and the static middleware share it.
package httprange

import "strings"

// MaxRanges bounds the ranges of one request: more (or ranges adding up to more
// than the file) get the whole file, as net/http does against range amplification
// (CVE-2011-3192).
const MaxRanges = 32

// Range is [Start, End) of the representation.
type Range struct{ Start, End int64 }

// Result says what to send.
type Result int

const (
	Ignore        Result = iota // no Range, malformed, or too many: whole file
	OK                          // satisfiable ranges
	Unsatisfiable               // 416
)

// Parse parses a Range value (RFC 9110 §14.1.2) for size bytes. Ranges
// that cannot be satisfied are dropped; none left is 416.
func Parse(v string, size int64) ([]Range, Result) {
	const unit = "bytes="
	if len(v) < len(unit) || !strings.EqualFold(v[:len(unit)], unit) {
		return nil, Ignore
	}
	var out []Range
	var total int64
	n := 0
	for spec := range strings.SplitSeq(v[len(unit):], ",") {
		spec = strings.TrimSpace(spec)
		if spec == "" {
			continue
		}
		if n++; n > MaxRanges {
			return nil, Ignore
		}
		first, last, ok := strings.Cut(spec, "-")
		if !ok {
			return nil, Ignore
		}
		first, last = strings.TrimSpace(first), strings.TrimSpace(last)
		var r Range
		if first == "" { // the last n bytes
			k, ok := digits(last)
			if !ok {
				return nil, Ignore
			}
			if k == 0 || size == 0 {
				continue
			}
			r = Range{max(0, size-k), size}
		} else {
			a, ok := digits(first)
			if !ok {
				return nil, Ignore
			}
			b := size - 1
			if last != "" {
				if b, ok = digits(last); !ok || b < a {
					return nil, Ignore
				}
				b = min(b, size-1)
			}
			if a >= size {
				continue
			}
			r = Range{a, b + 1}
		}
		total += r.End - r.Start
		out = append(out, r)
	}
	if n == 0 {
		return nil, Ignore
	}
	if len(out) == 0 {
		return nil, Unsatisfiable
	}
	if total > size && len(out) > 1 {
		return nil, Ignore // overlapping ranges asking for more than the file
	}
	return out, OK
}

// digits parses 1*DIGIT without sign or overflow.
func digits(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, true
}
