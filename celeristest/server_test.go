package celeristest_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
)

func TestServeOverASocket(t *testing.T) {
	_, addr := celeristest.Serve(t, celeris.Config{}, func(s *celeris.Server) {
		s.GET("/hello", func(c *celeris.Context) error { return c.String(200, "hello") })
	})
	resp, err := http.Get("http://" + addr + "/hello")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "hello" {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
}
