package openapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-playground/validator/v10"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/openapi"
)

type benchIn struct {
	ID    int64  `param:"id" validate:"gt=0"`
	Page  int    `query:"page" default:"1" validate:"min=1"`
	Name  string `json:"name" validate:"required,max=40"`
	Email string `json:"email" validate:"required,email"`
}

type benchOut struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	Page int    `json:"page"`
}

// benchServer has the same handler twice: as a typed route and as a plain
// route that calls Bind and JSON itself.
func benchServer() *celeris.Server {
	s := celeris.New(celeris.Config{Validator: playground{validator.New()}})
	api := openapi.New(s, openapi.Info{})
	openapi.Post(api, "/typed/:id", func(c *celeris.Context, in *benchIn) (*benchOut, error) {
		return &benchOut{ID: in.ID, Name: in.Name, Page: in.Page}, nil
	})
	s.POST("/plain/:id", func(c *celeris.Context) error {
		var in benchIn
		if err := c.Bind(&in); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, &benchOut{ID: in.ID, Name: in.Name, Page: in.Page})
	})
	return s
}

const benchBody = `{"name":"Ada","email":"ada@example.com"}`

func benchRequest(path string) *celeristest.Request {
	return celeristest.NewRequest("POST", path+"?page=2", strings.NewReader(benchBody)).
		WithHeader("Content-Type", "application/json")
}

// BenchmarkTypedRoute and BenchmarkPlainRouteBind: a typed route against the
// same plain handler with Bind, through the server's handler (no socket, so
// that the difference is not lost in the network's cost).
func BenchmarkTypedRoute(b *testing.B)     { benchRoute(b, "/typed/7") }
func BenchmarkPlainRouteBind(b *testing.B) { benchRoute(b, "/plain/7") }

func benchRoute(b *testing.B, path string) {
	s := benchServer()
	if r := celeristest.Do(s, benchRequest(path)); r.Status != 200 {
		b.Fatalf("%d %s", r.Status, r.Body)
	}
	b.ReportAllocs()
	for b.Loop() {
		celeristest.Do(s, benchRequest(path))
	}
}

// TestTypedRouteAllocs: a typed route allocates no more than the plain
// handler that binds and answers the same values.
func TestTypedRouteAllocs(t *testing.T) {
	s := benchServer()
	for _, p := range []string{"/typed/7", "/plain/7"} {
		if r := celeristest.Do(s, benchRequest(p)); r.Status != 200 || r.Text() != `{"id":7,"name":"Ada","page":2}` {
			t.Fatalf("%s: %d %s", p, r.Status, r.Body)
		}
	}
	typed := testing.AllocsPerRun(200, func() { celeristest.Do(s, benchRequest("/typed/7")) })
	plain := testing.AllocsPerRun(200, func() { celeristest.Do(s, benchRequest("/plain/7")) })
	if typed > plain {
		t.Fatalf("typed route: %.0f allocations per request, plain with Bind: %.0f", typed, plain)
	}
	t.Logf("allocations per request: typed %.0f, plain %.0f", typed, plain)
}

// BenchmarkTypedVsPlain alternates batches of the two routes within one run,
// so that a shared machine's noise falls on both alike, and reports each
// one's ns per request and their ratio (typed/plain).
func BenchmarkTypedVsPlain(b *testing.B) {
	s := benchServer()
	const batch = 500
	var typed, plain time.Duration
	for b.Loop() {
		t0 := time.Now()
		for range batch {
			celeristest.Do(s, benchRequest("/typed/7"))
		}
		t1 := time.Now()
		for range batch {
			celeristest.Do(s, benchRequest("/plain/7"))
		}
		typed += t1.Sub(t0)
		plain += time.Since(t1)
	}
	n := float64(b.N * batch)
	b.ReportMetric(float64(typed.Nanoseconds())/n, "typed-ns/req")
	b.ReportMetric(float64(plain.Nanoseconds())/n, "plain-ns/req")
	b.ReportMetric(float64(typed)/float64(plain), "typed/plain")
}
