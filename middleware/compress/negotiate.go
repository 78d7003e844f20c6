package compress

import "strings"

// pick returns the index of the coding to use for an Accept-Encoding value
// (see the package doc), or -1 for none. It allocates nothing.
func (m *middleware) pick(ae string) int {
	if ae == "" {
		return -1
	}
	best, bestQ := -1, 0
	for i := range m.codings {
		if q := Quality(ae, m.codings[i].enc.Coding()); q > bestQ {
			best, bestQ = i, q
		}
	}
	return best
}

// Quality is the q-value, in thousandths (0 to 1000), that an Accept-Encoding
// value gives a coding: the one it is listed with ("x-gzip" counts as "gzip",
// RFC 9110 §8.4.1.3), else the one of "*", else 0 (RFC 9110 §12.5.3). A
// malformed q counts as 0. It allocates nothing.
func Quality(ae, coding string) int {
	star := 0
	for ae != "" {
		var item string
		item, ae, _ = strings.Cut(ae, ",")
		name, params, _ := strings.Cut(item, ";")
		name = strings.TrimSpace(name)
		switch {
		case strings.EqualFold(name, coding),
			strings.EqualFold(coding, "gzip") && strings.EqualFold(name, "x-gzip"):
			return qValue(params)
		case name == "*":
			star = qValue(params)
		}
	}
	return star
}

// AcceptsGzip reports whether an Accept-Encoding value allows gzip: "gzip" or
// "x-gzip" with q > 0, or else "*" with q > 0 (RFC 9110 §12.5.3). It allocates
// nothing.
func AcceptsGzip(ae string) bool { return Quality(ae, "gzip") > 0 }

// qValue is the q parameter of a list member's parameters in thousandths; no q
// means 1000. A malformed q counts as 0.
func qValue(params string) int {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		name, value, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )
		value = strings.TrimSpace(value)
		if value == "" || len(value) > 5 || (value[0] != '0' && value[0] != '1') ||
			(len(value) > 1 && value[1] != '.') {
			return 0
		}
		q := int(value[0]-'0') * 1000
		scale := 100
		for i := 2; i < len(value); i++ {
			d := value[i]
			if d < '0' || d > '9' {
				return 0
			}
			q += int(d-'0') * scale
			scale /= 10
		}
		if q > 1000 {
			return 0
		}
		return q
	}
	return 1000
}
