package humaceleris_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/humatest"
	"github.com/danielgtaylor/huma/v2/sse"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/humaceleris"
)

// The cases of huma's shared adapter test (adapters/adapters_test.go of huma
// v2.37.2): inputs from path, query, header and body; an output header and
// body; two methods on one path; huma middleware that wraps the context
// (huma.WithContext) and unwraps it.

type key struct{}

type TestInput struct {
	Group   string `path:"group"`
	Verbose bool   `query:"verbose"`
	Auth    string `header:"Authorization"`
	Body    struct {
		Name  string `json:"name"`
		Email string `json:"email"`
	}
}

type TestOutput struct {
	MyHeader string `header:"MyHeader"`
	Body     struct {
		Message string `json:"message"`
	}
}

func testHandler(ctx context.Context, input *TestInput) (*TestOutput, error) {
	resp := &TestOutput{}
	resp.MyHeader = "my-value"
	resp.Body.Message = fmt.Sprintf("Hello, %s <%s>! (%s, %v, %s, %v)", input.Body.Name, input.Body.Email,
		input.Group, input.Verbose, input.Auth, ctx.Value(key{}))
	return resp, nil
}

func newAPI(t *testing.T, s *celeris.Server) huma.API {
	api := humaceleris.New(s, huma.DefaultConfig("Test", "1.0.0"))
	api.UseMiddleware(func(ctx huma.Context, next func(huma.Context)) {
		if ctx.TLS() != nil {
			t.Error("TLS state on a plaintext request")
		}
		if v := ctx.Version(); v.Proto != "HTTP/1.1" || v.ProtoMajor != 1 || v.ProtoMinor != 1 {
			t.Errorf("Version %+v", v)
		}
		ctx = huma.WithContext(ctx, context.WithValue(ctx.Context(), key{}, "value"))
		next(ctx)
	}, func(ctx huma.Context, next func(huma.Context)) {
		if humaceleris.Unwrap(ctx) == nil { // panics when it cannot unwrap
			t.Error("Unwrap: nil")
		}
		next(ctx)
	})
	return api
}

// TestAdapter is huma's shared adapter test, through humatest (net/http's
// ResponseRecorder, served by Server.ServeHTTP).
func TestAdapter(t *testing.T) {
	s := celeris.New(celeris.Config{})
	api := newAPI(t, s)
	methods := []string{http.MethodPut, http.MethodPost}
	for _, method := range methods {
		huma.Register(api, huma.Operation{OperationID: method + "-test", Method: method, Path: "/{group}"}, testHandler)
	}
	for _, method := range methods {
		testAPI := humatest.Wrap(t, api)
		resp := testAPI.Do(method, "/foo", "Host: localhost", "Authorization: Bearer abc123",
			strings.NewReader(`{"name": "Daniel", "email": "daniel@example.com"}`))
		if resp.Code != http.StatusOK || resp.Header().Get("MyHeader") != "my-value" {
			t.Fatalf("%s: %d %v %s", method, resp.Code, resp.Header(), resp.Body)
		}
		var got map[string]any
		if err := json.Unmarshal(resp.Body.Bytes(), &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{"$schema": "http://localhost/schemas/TestOutputBody.json",
			"message": "Hello, Daniel <daniel@example.com>! (foo, false, Bearer abc123, value)"}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("%s: %v, want %v", method, got, want)
		}
	}
}

// TestPathParamDecoding is huma's humachi case: an escaped path parameter
// arrives decoded.
func TestPathParamDecoding(t *testing.T) {
	s := celeris.New(celeris.Config{})
	api := humaceleris.New(s, huma.DefaultConfig("Test", "1.0.0"))
	type PathInput struct {
		Value string `path:"value"`
	}
	type Output struct {
		Body struct {
			Value string `json:"value"`
		}
	}
	huma.Get(api, "/test/{value}", func(ctx context.Context, input *PathInput) (*Output, error) {
		out := &Output{}
		out.Body.Value = input.Value
		return out, nil
	})
	tapi := humatest.Wrap(t, api)
	for path, want := range map[string]string{"/test/hello": "hello", "/test/hello%20%2Fworld%3Ftest%23fragment": "hello /world?test#fragment"} {
		resp := tapi.Get(path)
		var out struct {
			Value string `json:"value"`
		}
		if resp.Code != 200 || json.Unmarshal(resp.Body.Bytes(), &out) != nil || out.Value != want {
			t.Errorf("%s: %d %s, want %q", path, resp.Code, resp.Body, want)
		}
	}
}

// TestGroupPrefix is huma's humachi router-prefix case on a Celeris group:
// the operation answers under the group's prefix, and the docs point there.
func TestGroupPrefix(t *testing.T) {
	s := celeris.New(celeris.Config{})
	config := huma.DefaultConfig("My API", "1.0.0")
	config.Servers = []*huma.Server{{URL: "http://localhost:8888/api"}}
	api := humaceleris.NewWithGroup(s, s.Group("/api"), config)
	type TestOutput struct {
		Body struct {
			Field string `json:"field"`
		}
	}
	huma.Get(api, "/test", func(ctx context.Context, input *struct{}) (*TestOutput, error) {
		return &TestOutput{}, nil
	})
	tapi := humatest.Wrap(t, api)
	resp := tapi.Get("/api/test")
	if resp.Code != 200 || !strings.Contains(resp.Header().Get("Link"), "/api/schemas/TestOutputBody.json") {
		t.Fatalf("%d %v", resp.Code, resp.Header())
	}
	resp = tapi.Get("/api/docs")
	if resp.Code != 200 || !strings.Contains(resp.Body.String(), "/api/openapi.yaml") {
		t.Fatalf("docs: %d %.200s", resp.Code, resp.Body)
	}
}

// TestOverSocket: a huma API on a running Celeris server, called by
// net/http's client: a JSON answer with its length, a validation error
// (huma's 422 problem details), and server-sent events streamed as huma
// flushes them.
func TestOverSocket(t *testing.T) {
	var api huma.API
	_, addr := celeristest.Serve(t, celeris.Config{}, func(s *celeris.Server) {
		api = humaceleris.New(s, huma.DefaultConfig("Test", "1.0.0"))
		type In struct {
			N    int `query:"n" minimum:"1" maximum:"5"`
			Body struct {
				Name string `json:"name" minLength:"2"`
			}
		}
		type Out struct {
			Body struct {
				Greeting string `json:"greeting"`
			}
		}
		huma.Post(api, "/greet", func(ctx context.Context, in *In) (*Out, error) {
			o := &Out{}
			o.Body.Greeting = strings.Repeat("hi "+in.Body.Name+" ", in.N)
			return o, nil
		})
		huma.Delete(api, "/items/{id}", func(ctx context.Context, in *struct {
			ID int `path:"id"`
		}) (*struct{}, error) {
			if in.ID == 404 {
				return nil, huma.Error404NotFound("no item 404")
			}
			return nil, nil
		})
		type Tick struct {
			N int `json:"n"`
		}
		sse.Register(api, huma.Operation{OperationID: "ticks", Method: http.MethodGet, Path: "/ticks"},
			map[string]any{"tick": Tick{}},
			func(ctx context.Context, input *struct{}, send sse.Sender) {
				for i := 1; i <= 3; i++ {
					if err := send.Data(Tick{N: i}); err != nil {
						return
					}
					time.Sleep(20 * time.Millisecond)
				}
			})
	})
	base := "http://" + addr
	post := func(q, body string) (*http.Response, string) {
		res, err := http.Post(base+"/greet"+q, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	res, body := post("?n=2", `{"name":"Ada"}`)
	if res.StatusCode != 200 || !strings.Contains(body, `"greeting":"hi Ada hi Ada "`) || res.ContentLength != int64(len(body)) {
		t.Fatalf("%d (length %d) %s", res.StatusCode, res.ContentLength, body)
	}
	res, body = post("?n=9", `{"name":"A"}`)
	if res.StatusCode != 422 || res.Header.Get("Content-Type") != "application/problem+json" ||
		!strings.Contains(body, "query.n") || !strings.Contains(body, "body.name") {
		t.Fatalf("%d %s %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	for path, want := range map[string]int{"/items/1": 204, "/items/404": 404, "/items/x": 422} {
		req, _ := http.NewRequest(http.MethodDelete, base+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != want || (want == 204 && len(b) != 0) {
			t.Fatalf("DELETE %s: %d %q, want %d", path, res.StatusCode, b, want)
		}
	}
	res, err := http.Get(base + "/ticks")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	// Streamed (huma flushed each event): no length known ahead.
	if res.Header.Get("Content-Type") != "text/event-stream" || res.ContentLength != -1 {
		t.Fatalf("Content-Type %q, length %d", res.Header.Get("Content-Type"), res.ContentLength)
	}
	b, _ := io.ReadAll(res.Body)
	for i := 1; i <= 3; i++ {
		if !strings.Contains(string(b), fmt.Sprintf(`data: {"n":%d}`, i)) {
			t.Fatalf("events: %s", b)
		}
	}
}
