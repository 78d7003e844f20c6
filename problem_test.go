package celeris

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestPrefersProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		accept string
		want   bool
	}{
		{accept: "", want: false},
		{accept: "*/*", want: false},
		{accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", want: false},
		{accept: "application/problem+json", want: true},
		{accept: "application/json", want: true},
		{accept: "application/*", want: true},
		{accept: "application/problem+json;q=0.5, text/plain", want: false},
		{accept: "text/plain;q=0.5, application/problem+json", want: true},
		{accept: "text/*;q=0.2, application/json;q=0.3", want: true},
		{accept: "application/problem+json;q=0, */*", want: false},
		{accept: "application/problem+json, text/plain", want: false}, // a tie keeps the default
		{accept: "APPLICATION/PROBLEM+JSON ; q=1", want: true},
		{accept: "image/png", want: false},
	}
	for _, tt := range tests {
		if got := PrefersProblem(tt.accept); got != tt.want {
			t.Errorf("PrefersProblem(%q) = %v, want %v", tt.accept, got, tt.want)
		}
	}
}

func TestProblemMarshal(t *testing.T) {
	t.Parallel()
	p := &Problem{Type: "https://example.com/probs/out-of-credit", Title: "You do not have enough credit.",
		Status: 403, Detail: "Your current balance is 30, but that costs 50.", Instance: "/account/12345/msgs/abc",
		Extensions: map[string]any{"balance": 30, "accounts": []string{"/account/12345"}, "status": "ignored"}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"https://example.com/probs/out-of-credit","title":"You do not have enough credit.","status":403,` +
		`"detail":"Your current balance is 30, but that costs 50.","instance":"/account/12345/msgs/abc",` +
		`"accounts":["/account/12345"],"balance":30}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(&Problem{Status: 404})
	if string(b) != `{"type":"about:blank","title":"Not Found","status":404}` {
		t.Errorf("defaults: %s", b)
	}
	if _, err := json.Marshal(&Problem{Status: 400, Extensions: map[string]any{"bad": func() {}}}); err == nil {
		t.Error("an extension that does not encode: no error")
	}
	if s := NewProblem(409, "taken").Error(); s != "409 Conflict: taken" {
		t.Errorf("Error() = %q", s)
	}
}

// problemBody is a decoded problem details answer.
type problemBody struct {
	Type     string         `json:"type"`
	Title    string         `json:"title"`
	Status   int            `json:"status"`
	Detail   string         `json:"detail"`
	Instance string         `json:"instance"`
	Errors   []ProblemField `json:"errors"`
	Balance  int            `json:"balance"`
}

// TestProblemDetails: the default error handler answers every kind of error as a
// problem when Accept prefers one and as before when it does not, over h1 and
// h2c with Go's client; ProblemErrorHandler always answers with a problem.
func TestProblemDetails(t *testing.T) {
	t.Parallel()
	register := func(s *Server) {
		s.GET("/http", func(c *Context) error { return NewHTTPError(http.StatusConflict, "name taken") })
		s.GET("/plain", func(c *Context) error { return errors.New("db password is hunter2") })
		s.GET("/problem", func(c *Context) error {
			return &Problem{Type: "https://example.com/credit", Title: "Out of credit", Status: 403,
				Detail: "balance 30, cost 50", Extensions: map[string]any{"balance": 30}}
		})
		s.GET("/panic", func(c *Context) error { panic("boom") })
		s.POST("/bind", func(c *Context) error {
			var v pgTodo
			if err := c.Bind(&v); err != nil {
				return err
			}
			return c.String(200, "ok")
		})
	}
	quiet := slog.New(slog.DiscardHandler)
	_, addr := startServer(t, Config{Validator: pgValidator{}, Logger: quiet}, register)
	_, addrP := startServer(t, Config{Validator: pgValidator{}, Logger: quiet, ErrorHandler: ProblemErrorHandler}, register)

	type answer struct {
		status      int
		contentType string
		body        string
	}
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		do := func(addr, method, path, accept, body string) answer {
			t.Helper()
			req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			wantProto(t, resp, proto)
			b, _ := io.ReadAll(resp.Body)
			return answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: string(b)}
		}
		problem := func(a answer) problemBody {
			t.Helper()
			if a.contentType != ProblemContentType {
				t.Fatalf("Content-Type %q, want %s (body %s)", a.contentType, ProblemContentType, a.body)
			}
			var p problemBody
			if err := json.Unmarshal([]byte(a.body), &p); err != nil {
				t.Fatalf("body %q: %v", a.body, err)
			}
			if p.Status != a.status {
				t.Errorf("status member %d, answer %d", p.Status, a.status)
			}
			return p
		}
		const pj = "application/problem+json"
		const browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

		// Without a preference for it: the default handler's answers as they were.
		for _, accept := range []string{"", "*/*", browser} {
			if a := do(addr, "GET", "/http", accept, ""); a.status != 409 || a.body != "name taken" || !strings.HasPrefix(a.contentType, "text/plain") {
				t.Errorf("Accept %q: /http answered %+v", accept, a)
			}
			if a := do(addr, "GET", "/nowhere", accept, ""); a.status != 404 || a.body != "Not Found" {
				t.Errorf("Accept %q: 404 answered %+v", accept, a)
			}
			if a := do(addr, "GET", "/panic", accept, ""); a.status != 500 || a.body != "Internal Server Error" {
				t.Errorf("Accept %q: panic answered %+v", accept, a)
			}
			if a := do(addr, "GET", "/problem", accept, ""); a.status != 403 || a.body != "balance 30, cost 50" {
				t.Errorf("Accept %q: a returned Problem answered %+v", accept, a)
			}
		}

		for _, srv := range []struct{ name, addr, accept string }{
			{name: "negotiated", addr: addr, accept: pj},
			{name: "negotiated application/json", addr: addr, accept: "text/plain;q=0.5, application/json"},
			{name: "ProblemErrorHandler", addr: addrP, accept: ""},
		} {
			a := do(srv.addr, "GET", "/http", srv.accept, "")
			if p := problem(a); p.Status != 409 || p.Type != "about:blank" || p.Title != "Conflict" || p.Detail != "name taken" || p.Instance != "/http" {
				t.Errorf("%s: /http: %+v", srv.name, p)
			}
			a = do(srv.addr, "GET", "/nowhere?x=1", srv.accept, "")
			if p := problem(a); p.Status != 404 || p.Title != "Not Found" || p.Detail != "" || p.Instance != "/nowhere" {
				t.Errorf("%s: 404: %+v", srv.name, p)
			}
			a = do(srv.addr, "DELETE", "/http", srv.accept, "")
			if p := problem(a); p.Status != 405 {
				t.Errorf("%s: 405: %+v", srv.name, p)
			}
			a = do(srv.addr, "GET", "/plain", srv.accept, "")
			if p := problem(a); p.Status != 500 || p.Detail != "" || strings.Contains(a.body, "hunter2") {
				t.Errorf("%s: plain error: %s", srv.name, a.body)
			}
			a = do(srv.addr, "GET", "/problem", srv.accept, "")
			if p := problem(a); p.Status != 403 || p.Type != "https://example.com/credit" || p.Title != "Out of credit" || p.Balance != 30 {
				t.Errorf("%s: returned Problem: %s", srv.name, a.body)
			}
			a = do(srv.addr, "POST", "/bind?prio=9", srv.accept, `{"title":"","items":[{"name":"a"}]}`)
			p := problem(a)
			want := []ProblemField{
				{Field: "title", In: "validate", Rule: "required", Message: "title is required"},
				{Field: "prio", In: "validate", Rule: "lte", Param: "5", Message: "prio must satisfy lte=5"},
				{Field: "items[0].name", In: "validate", Rule: "min", Param: "2", Message: "items[0].name must satisfy min=2"},
			}
			if p.Status != 400 || len(p.Errors) != len(want) {
				t.Fatalf("%s: validation: %s", srv.name, a.body)
			}
			for i := range want {
				if p.Errors[i] != want[i] {
					t.Errorf("%s: errors[%d] = %+v, want %+v", srv.name, i, p.Errors[i], want[i])
				}
			}
			a = do(srv.addr, "POST", "/bind?prio=x", srv.accept, `{"title":"t"}`)
			if p := problem(a); p.Status != 400 || len(p.Errors) != 1 || p.Errors[0].Field != "prio" || p.Errors[0].In != "query" {
				t.Errorf("%s: conversion: %s", srv.name, a.body)
			}
		}
		// A panic is a problem when Accept prefers one (the server answers it,
		// not the error handler).
		a := do(addr, "GET", "/panic", pj, "")
		if p := problem(a); p.Status != 500 || p.Instance != "/panic" {
			t.Errorf("panic: %s", a.body)
		}
	})
}

// FuzzPrefersProblem: any Accept value is answered without a panic, and
// listing problem+json first at q=1 after text/plain at q=0 always prefers it.
func FuzzPrefersProblem(f *testing.F) {
	for _, s := range []string{"*/*", "application/problem+json", "text/plain;q=0.5, application/json", ";q=", "a/b;q=x,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		_ = PrefersProblem(accept)
		if strings.ContainsAny(accept, "/") {
			return // it may name text/plain itself, more specifically
		}
		if !PrefersProblem("application/problem+json, text/plain;q=0, " + accept) {
			t.Fatalf("problem+json first, text/plain refused, then %q: not preferred", accept)
		}
	})
}
