package openapi_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
)

// newValidator parses spec with libopenapi, checks it against the OpenAPI
// 3.1 meta-schema (libopenapi-validator's embedded copy), and returns the
// validator for requests and responses.
func newValidator(t *testing.T, spec []byte) validator.Validator {
	t.Helper()
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("version %q", v)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("validator: %v", errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("document: %s: %s", e.Message, e.Reason)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s at %s", se.Reason, se.KeywordLocation)
			}
		}
		t.FailNow()
	}
	return v
}

// TestDocumentValidates: the document is valid OpenAPI 3.1, and the server's
// real answers (successes and errors) match what it says, as
// libopenapi-validator reads it.
func TestDocumentValidates(t *testing.T) {
	_, base := newAPI(t)
	_, spec := get(t, base+"/openapi.json")
	v := newValidator(t, spec)
	cases := []struct {
		method, path, ct, body string
		validRequest           bool
	}{
		{"GET", "/users?page=2&tag=ab", "", "", true},
		{"GET", "/users?role=root", "", "", false},
		{"GET", "/users/42", "", "", true},
		{"GET", "/users/404", "", "", true},
		{"GET", "/users/0", "", "", false},
		{"POST", "/orgs/acme/users", "application/json", `{"name":"Ada","email":"ada@example.com"}`, true},
		{"POST", "/orgs/acme/users", "application/json", `{"name":"A"}`, false},
		{"POST", "/orgs/acme/users", "text/plain", `x`, false},
		{"GET", "/health", "", "", true},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		if c.ct != "" {
			req.Header.Set("Content-Type", c.ct)
		}
		if c.path == "/users/42" || c.path == "/users/404" {
			req.Header.Set("Authorization", "Bearer x")
		}
		if strings.HasPrefix(c.path, "/orgs/") {
			req.AddCookie(&http.Cookie{Name: "session", Value: "s"})
		}
		res, b := do(t, req)
		// Both were read: give the validator fresh copies.
		req.Body = io.NopCloser(strings.NewReader(c.body))
		res.Body = io.NopCloser(bytes.NewReader(b))
		if ok, errs := v.ValidateHttpResponse(req, res); !ok {
			for _, e := range errs {
				t.Errorf("%s %s -> %d: response: %s: %s", c.method, c.path, res.StatusCode, e.Message, e.Reason)
			}
		}
		req.Body = io.NopCloser(strings.NewReader(c.body))
		ok, errs := v.ValidateHttpRequest(req)
		if ok != c.validRequest {
			t.Errorf("%s %s: request valid %v, want %v (%v)", c.method, c.path, ok, c.validRequest, errs)
		}
		if !c.validRequest && res.StatusCode < 400 {
			t.Errorf("%s %s: the document refuses the request but the server answered %d", c.method, c.path, res.StatusCode)
		}
	}
}
