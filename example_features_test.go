package celeris_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
)

func ExampleContext_Bind() {
	type listTodos struct {
		Owner int64    `param:"owner"`
		Page  int      `query:"page" default:"1"`
		Size  int      `query:"size" default:"20"`
		Tags  []string `query:"tag"`
	}
	s := celeris.New(celeris.Config{})
	s.GET("/owners/:owner/todos", func(c *celeris.Context) error {
		var in listTodos
		if err := c.Bind(&in); err != nil {
			return err // 400, listing each field that failed
		}
		return c.String(http.StatusOK, fmt.Sprintf("%+v", in))
	})
	resp := celeristest.Do(s, celeristest.NewRequest("GET", "/owners/7/todos?page=2&tag=a&tag=b", nil))
	fmt.Println(resp.Status, string(resp.Body))
	resp = celeristest.Do(s, celeristest.NewRequest("GET", "/owners/x/todos?page=two", nil))
	fmt.Println(resp.Status, string(resp.Body))
	// Output:
	// 200 {Owner:7 Page:2 Size:20 Tags:[a b]}
	// 400 invalid request: owner (param): invalid integer "x"; page (query): invalid integer "two"
}

func ExampleContext_Negotiate() {
	s := celeris.New(celeris.Config{})
	s.GET("/todo", func(c *celeris.Context) error {
		todo := struct {
			ID    int    `json:"id" xml:"id"`
			Title string `json:"title" xml:"title"`
		}{1, "write docs"}
		return c.Negotiate(http.StatusOK, map[string]any{
			"application/json": todo,
			"text/plain":       todo.Title,
		})
	})
	req := celeristest.NewRequest("GET", "/todo", nil)
	req.Header.Set("Accept", "text/plain")
	resp := celeristest.Do(s, req)
	fmt.Println(string(resp.Body))
	// Output: write docs
}

func ExampleServer_URL() {
	s := celeris.New(celeris.Config{})
	s.GET("/todos/:id", func(c *celeris.Context) error { return nil }).Name("todo")
	fmt.Println(s.URL("todo", 42))
	// Output: /todos/42
}

// ruleError is one failed rule, shaped like go-playground's validator.FieldError
// (Field, Tag, Param, StructNamespace).
type ruleError struct{ ns, field, tag, param string }

func (e ruleError) Field() string           { return e.field }
func (e ruleError) Tag() string             { return e.tag }
func (e ruleError) Param() string           { return e.param }
func (e ruleError) StructNamespace() string { return e.ns }
func (e ruleError) Error() string           { return e.field + " failed " + e.tag }

type ruleErrors []ruleError

func (e ruleErrors) Error() string { return "validation failed" }

type newTodo struct {
	Title string `json:"title"`
	Prio  int    `json:"prio"`
}

type todoValidator struct{}

func (todoValidator) Validate(v any) error {
	var errs ruleErrors
	if t := v.(*newTodo); t.Title == "" {
		errs = append(errs, ruleError{"newTodo.Title", "Title", "required", ""})
	}
	if t := v.(*newTodo); t.Prio > 5 {
		errs = append(errs, ruleError{"newTodo.Prio", "Prio", "lte", "5"})
	}
	if errs != nil {
		return errs
	}
	return nil
}

// A validator's field errors reach the error handler typed: the request's name of
// the field, the rule and its parameter, for messages of your own.
func ExampleBindError() {
	s := celeris.New(celeris.Config{Validator: todoValidator{}, ErrorHandler: func(c *celeris.Context, err error) {
		var be *celeris.BindError
		if errors.As(err, &be) {
			for _, f := range be.Fields {
				fmt.Printf("field=%s rule=%s param=%s\n", f.Field, f.Rule, f.Param)
			}
		}
		celeris.DefaultErrorHandler(c, err)
	}})
	s.POST("/todos", func(c *celeris.Context) error {
		var in newTodo
		return c.BindJSON(&in)
	})
	req := celeristest.NewRequest("POST", "/todos", strings.NewReader(`{"prio":9}`))
	req.Header.Set("Content-Type", "application/json")
	resp := celeristest.Do(s, req)
	fmt.Println(resp.Status, string(resp.Body))
	// Output:
	// field=title rule=required param=
	// field=prio rule=lte param=5
	// 400 invalid request: title is required; prio must satisfy lte=5
}
