package openapi

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// FuzzRules: any validate tag, on fields of every kind the schema knows,
// gives a schema that encodes, and never panics; oneof values come back
// without their quotes.
func FuzzRules(f *testing.F) {
	for _, s := range []string{"required,min=2,max=40", "dive,len=2", "oneof=a 'b c' d", "gt=0,lt=9.5",
		"omitempty,email", "min=1,dive,dive,uuid", "dive", "oneof='", "len=-3", "eq=x", "a|b,max=2"} {
		f.Add(s)
	}
	types := []reflect.Type{reflect.TypeFor[string](), reflect.TypeFor[int8](), reflect.TypeFor[uint](),
		reflect.TypeFor[float32](), reflect.TypeFor[[]string](), reflect.TypeFor[map[string][]int](),
		reflect.TypeFor[[3]int](), reflect.TypeFor[[]byte](), reflect.TypeFor[time.Duration](),
		reflect.TypeFor[*bool](), reflect.TypeFor[time.Time]()}
	f.Fuzz(func(t *testing.T, rules string) {
		reg := newRegistry()
		for _, typ := range types {
			s := reg.schemaOf(typ, modeIn)
			applyRules(s, typ, rules)
			if _, err := json.Marshal(s); err != nil {
				t.Fatalf("%s on %s: %v", rules, typ, err)
			}
		}
		for _, v := range oneofValues(rules) {
			if len(v) > 0 && v[0] == '\'' && len(v) > 1 && v[len(v)-1] == '\'' {
				t.Fatalf("oneof %q kept quotes: %q", rules, v)
			}
		}
	})
}

// TestConvertPath: route patterns as OpenAPI paths, and operation names.
func TestConvertPath(t *testing.T) {
	for _, tt := range []struct{ pattern, path, id string }{
		{"/", "/", "getRoot"},
		{"/users/:id", "/users/{id}", "getUsersById"},
		{"/users/:id/posts/:postId", "/users/{id}/posts/{postId}", "getUsersByIdPostsByPostId"},
		{"/files/*path", "/files/{path}", "getFilesByPath"},
		{"/openapi.json", "/openapi.json", "getOpenapiJson"},
	} {
		if p, _ := convertPath(tt.pattern); p != tt.path {
			t.Errorf("convertPath(%q) = %q, want %q", tt.pattern, p, tt.path)
		}
		if id := operationID("GET", tt.pattern); id != tt.id {
			t.Errorf("operationID(%q) = %q, want %q", tt.pattern, id, tt.id)
		}
	}
}

// TestAcceptsGzip: Accept-Encoding with q-values.
func TestAcceptsGzip(t *testing.T) {
	for ae, want := range map[string]bool{"": false, "gzip": true, "br, gzip;q=0.5": true, "gzip;q=0": false,
		"gzip; q=0.0, identity": false, "*": true, "deflate": false, "GZIP": true} {
		if got := acceptsGzip(ae); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", ae, got, want)
		}
	}
}
