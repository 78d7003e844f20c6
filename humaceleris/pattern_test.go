package humaceleris

import "testing"

// TestPattern: huma's path templates as Celeris patterns.
func TestPattern(t *testing.T) {
	for in, want := range map[string]string{
		"/":                   "/",
		"/items/{id}":         "/items/:id",
		"/a/{x}/b/{y}":        "/a/:x/b/:y",
		"/files/{path...}":    "/files/*path",
		"/broken/{id":         "/broken/{id",
		"/plain/path.json":    "/plain/path.json",
		"/{group}":            "/:group",
		"/v1/{org}/{repo...}": "/v1/:org/*repo",
	} {
		if got := pattern(in); got != want {
			t.Errorf("pattern(%q) = %q, want %q", in, got, want)
		}
	}
}
