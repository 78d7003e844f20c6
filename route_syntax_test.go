package celeris

import (
	"strings"
	"testing"
)

// TestRoutePatternSyntaxPanics: net/http and chi syntax ("/users/{id}") and
// optional parameters ("/a/:b?") are not Celeris syntax; registering them must
// panic, naming the pattern and the syntax that is supported, instead of
// registering a literal path or a parameter named "b?".
func TestRoutePatternSyntaxPanics(t *testing.T) {
	for _, pattern := range []string{"/users/{id}", "/a/:b?", "/x/{rest...}", "/a/:b-c!"} {
		t.Run(pattern, func(t *testing.T) {
			s := New(Config{})
			msg := func() (msg string) {
				defer func() {
					v := recover()
					if v == nil {
						t.Fatalf("GET %q registered", pattern)
					}
					msg, _ = v.(string)
				}()
				s.GET(pattern, func(c *Context) error { return nil })
				return ""
			}()
			if !strings.Contains(msg, `"`+pattern+`"`) || !strings.Contains(msg, ":name") || !strings.Contains(msg, "*name") {
				t.Fatalf("panic %q: want the pattern and the supported syntax (:name, *name)", msg)
			}
		})
	}
}
