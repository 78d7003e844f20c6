package celeris_test

import (
	"fmt"
	"net/http"

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
