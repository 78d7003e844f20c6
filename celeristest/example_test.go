package celeristest_test

import (
	"fmt"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
)

func ExampleDo() {
	s := celeris.New(celeris.Config{})
	s.GET("/hello/:name", func(c *celeris.Context) error {
		return c.String(200, "hello "+c.Param("name"))
	})

	resp := celeristest.Do(s, celeristest.NewRequest("GET", "/hello/gopher", nil))
	fmt.Println(resp.Status, resp.Text())
	fmt.Println(resp.Header.Get("Content-Type"))

	resp = celeristest.Do(s, celeristest.NewRequest("POST", "/hello/gopher", nil))
	fmt.Println(resp.Status, resp.Header.Get("Allow"))
	// Output:
	// 200 hello gopher
	// text/plain; charset=utf-8
	// 405 GET, HEAD
}

func ExampleRunRoute() {
	show := func(c *celeris.Context) error {
		return c.JSON(200, map[string]string{"id": c.Param("id")})
	}
	resp := celeristest.RunRoute("/items/:id", show, celeristest.NewRequest("GET", "/items/42", nil))
	fmt.Println(resp.Status, resp.Text())
	// Output: 200 {"id":"42"}
}

func ExampleRun() {
	greet := func(c *celeris.Context) error {
		return c.String(200, "hi "+c.Query("name"))
	}
	resp := celeristest.Run(greet, celeristest.NewRequest("GET", "/?name=Ana", nil))
	fmt.Println(resp.Text())
	// Output: hi Ana
}
