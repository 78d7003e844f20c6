package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oapi-codegen/oapi-codegen/v2/pkg/codegen"
	"github.com/oapi-codegen/oapi-codegen/v2/pkg/util"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/demo"
)

// startDemoHTTP runs the demo server (its routes, middleware and the OpenAPI
// description cmd/demo adds) on 127.0.0.1:0 in the test process and returns
// its base URL.
func startDemoHTTP(t *testing.T) string {
	t.Helper()
	s, err := demo.NewTLSServer("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + celeristest.Start(t, s)
}

func fetch(t *testing.T, url string) []byte {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
	}
	return b
}

// TestDemoOpenAPIValid: the demo's /openapi.json is valid OpenAPI 3.1 for
// libopenapi-validator (the document against the 3.1 meta-schema), it
// describes every route of the demo's contract with a summary, and the
// demo's real answers to requests on those routes match it.
func TestDemoOpenAPIValid(t *testing.T) {
	base := startDemoHTTP(t)
	spec := fetch(t, base+"/openapi.json")
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	if v := doc.GetVersion(); v != "3.1.0" {
		t.Fatalf("openapi %q", v)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			t.Errorf("%s: %s", e.Message, e.Reason)
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("  %s at %s", se.Reason, se.KeywordLocation)
			}
		}
		t.FailNow()
	}

	// Every route of ../../shared/DEMO.md's table, and the description's own.
	var parsed struct {
		Paths map[string]map[string]struct {
			Summary string `json:"summary"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(spec, &parsed); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"GET /bench", "GET /json", "GET /users/{id}/posts/{postId}", "POST /upload",
		"GET /download", "GET /slow", "GET /panic", "GET /nethttp/hello", "GET /sse", "GET /stream",
		"GET /metrics", "GET /ws/echo", "GET /", "GET /openapi.json", "GET /docs"} {
		method, path, _ := strings.Cut(r, " ")
		if op, ok := parsed.Paths[path][strings.ToLower(method)]; !ok || op.Summary == "" {
			t.Errorf("%s: not described (or without a summary)", r)
		}
	}

	// The demo's answers, successes and errors (as text and, when Accept
	// prefers it, as RFC 9457 problem details), match the description.
	for _, c := range []struct{ method, path, body, accept string }{
		{"GET", "/bench", "", ""}, {"GET", "/json", "", ""}, {"GET", "/users/7/posts/9", "", ""},
		{"POST", "/upload", "12345", ""}, {"GET", "/download?size=10", "", ""}, {"GET", "/download?size=x", "", ""},
		{"GET", "/slow?ms=1", "", ""}, {"GET", "/panic", "", ""}, {"GET", "/nethttp/hello", "", ""},
		{"GET", "/stream?n=2", "", ""}, {"GET", "/metrics", "", ""}, {"GET", "/", "", ""}, {"GET", "/docs", "", ""},
		{"GET", "/download?size=x", "", "application/problem+json"}, {"GET", "/panic", "", "application/problem+json"},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
		if c.body != "" {
			req.Header.Set("Content-Type", "application/octet-stream")
		}
		if c.accept != "" {
			req.Header.Set("Accept", c.accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err == nil && c.accept != "" && res.Header.Get("Content-Type") != c.accept {
			t.Errorf("%s %s with Accept %s: Content-Type %q", c.method, c.path, c.accept, res.Header.Get("Content-Type"))
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		res.Body = io.NopCloser(bytes.NewReader(b))
		req.Body = io.NopCloser(strings.NewReader(c.body))
		if ok, errs := v.ValidateHttpResponse(req, res); !ok {
			for _, e := range errs {
				t.Errorf("%s %s -> %d: %s: %s", c.method, c.path, res.StatusCode, e.Message, e.Reason)
			}
		}
	}
}

// TestDemoClientGenerated: democlient is what oapi-codegen (the library of
// its command, v2.8.2) generates from the running demo's /openapi.json today;
// CELERIS_UPDATE_CLIENT=1 rewrites it.
func TestDemoClientGenerated(t *testing.T) {
	base := startDemoHTTP(t)
	spec := fetch(t, base+"/openapi.json")
	specFile := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(specFile, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	swagger, err := util.LoadSwagger(specFile)
	if err != nil {
		t.Fatal(err)
	}
	code, err := codegen.Generate(swagger, codegen.Configuration{
		PackageName: "democlient",
		Generate:    codegen.GenerateOptions{Client: true, Models: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	const file = "democlient/democlient.gen.go"
	if os.Getenv("CELERIS_UPDATE_CLIENT") == "1" {
		if err := os.WriteFile(file, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != code {
		t.Fatalf("%s is not what oapi-codegen makes of /openapi.json now; run CELERIS_UPDATE_CLIENT=1 go test -run TestDemoClientGenerated", file)
	}
}
