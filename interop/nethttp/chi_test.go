package nethttp

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-playground/validator/v10"
)

// start serves s on 127.0.0.1:0 until the test ends.
func start(t *testing.T, cfg celeris.Config, register func(s *celeris.Server)) string {
	t.Helper()
	cfg.Addr, cfg.EventLoops = "127.0.0.1:0", 1
	s := celeris.New(cfg)
	register(s)
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	select {
	case <-s.Ready():
	case err := <-errc:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Error(err)
		}
	})
	return "http://" + s.Addr().String()
}

func clients() map[string]*http.Client {
	h1 := &http.Transport{}
	h1.Protocols = new(http.Protocols)
	h1.Protocols.SetHTTP1(true)
	h2 := &http.Transport{}
	h2.Protocols = new(http.Protocols)
	h2.Protocols.SetUnencryptedHTTP2(true)
	return map[string]*http.Client{
		"h1":  {Transport: h1, Timeout: 20 * time.Second},
		"h2c": {Transport: h2, Timeout: 20 * time.Second},
	}
}

func get(t *testing.T, cl *http.Client, url string, h ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(h); i += 2 {
		req.Header.Set(h[i], h[i+1])
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestChiRealIP(t *testing.T) {
	base := start(t, celeris.Config{}, func(s *celeris.Server) {
		s.Use(celeris.WrapMiddleware(middleware.RealIP))
		s.GET("/ip", func(c *celeris.Context) error { return c.String(200, c.ClientIP()) })
	})
	for name, cl := range clients() {
		if _, body := get(t, cl, base+"/ip", "X-Real-IP", "203.0.113.5"); body != "203.0.113.5" {
			t.Errorf("%s: ClientIP %q", name, body)
		}
		if _, body := get(t, cl, base+"/ip", "X-Forwarded-For", "198.51.100.7, 10.0.0.1"); body != "198.51.100.7" {
			t.Errorf("%s: ClientIP from X-Forwarded-For %q", name, body)
		}
	}
}

func TestChiStripSlashes(t *testing.T) {
	base := start(t, celeris.Config{}, func(s *celeris.Server) {
		s.Pre(celeris.WrapMiddleware(middleware.StripSlashes))
		s.GET("/users", func(c *celeris.Context) error { return c.String(200, "users "+c.Path()) })
	})
	for name, cl := range clients() {
		if resp, body := get(t, cl, base+"/users/"); resp.StatusCode != 200 || body != "users /users" {
			t.Errorf("%s: %d %q", name, resp.StatusCode, body)
		}
	}
}

func TestChiCompress(t *testing.T) {
	base := start(t, celeris.Config{}, func(s *celeris.Server) {
		s.Use(celeris.WrapMiddleware(middleware.Compress(5, "text/plain")))
		s.GET("/text", func(c *celeris.Context) error { return c.String(200, strings.Repeat("celeris ", 500)) })
		s.GET("/err", func(c *celeris.Context) error { return celeris.NewHTTPError(422, strings.Repeat("bad ", 100)) })
	})
	for name, cl := range clients() {
		for path, want := range map[string]string{"/text": strings.Repeat("celeris ", 500), "/err": strings.Repeat("bad ", 100)} {
			resp, raw := get(t, cl, base+path, "Accept-Encoding", "gzip")
			if resp.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s %s: not compressed: %d %v", name, path, resp.StatusCode, resp.Header)
			}
			zr, err := gzip.NewReader(strings.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			plain, _ := io.ReadAll(zr)
			if string(plain) != want || len(raw) >= len(want) {
				t.Errorf("%s %s: %d bytes on the wire, plain %q...", name, path, len(raw), plain[:min(len(plain), 20)])
			}
		}
	}
}

func TestChiLogger(t *testing.T) {
	var buf syncBuffer
	logger := middleware.RequestLogger(&middleware.DefaultLogFormatter{Logger: log.New(&buf, "", 0), NoColor: true})
	base := start(t, celeris.Config{}, func(s *celeris.Server) {
		s.Use(celeris.WrapMiddleware(logger))
		s.GET("/hello", func(c *celeris.Context) error { return c.String(201, "hello, world") })         // 12 bytes
		s.GET("/fail", func(c *celeris.Context) error { return celeris.NewHTTPError(409, "conflict!") }) // 9 bytes
	})
	for name, cl := range clients() {
		buf.Reset()
		get(t, cl, base+"/hello")
		get(t, cl, base+"/fail")
		out := buf.String()
		if !strings.Contains(out, "/hello") || !strings.Contains(out, "- 201 12B") ||
			!strings.Contains(out, "/fail") || !strings.Contains(out, "- 409 9B") {
			t.Errorf("%s: log %q", name, out)
		}
	}
}

func TestMaxBytesHandler(t *testing.T) {
	base := start(t, celeris.Config{}, func(s *celeris.Server) {
		s.Use(celeris.WrapMiddleware(func(h http.Handler) http.Handler { return http.MaxBytesHandler(h, 10) }))
		s.POST("/echo", func(c *celeris.Context) error {
			b, err := c.Body()
			if err != nil {
				return err
			}
			return c.Blob(200, "text/plain", b)
		})
	})
	for name, cl := range clients() {
		resp, err := cl.Post(base+"/echo", "text/plain", strings.NewReader(strings.Repeat("x", 100)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 413 {
			t.Errorf("%s: %d, want 413", name, resp.StatusCode)
		}
	}
}

type playground struct{ v *validator.Validate }

func (p playground) Validate(v any) error { return p.v.Struct(v) }

// TestPlaygroundValidator: go-playground's field errors reach the error handler
// typed (request name, tag, param, value), errors.As still finds
// validator.ValidationErrors, and the default message uses the tag names.
func TestPlaygroundValidator(t *testing.T) {
	type item struct {
		SKU string `json:"sku" validate:"required"`
	}
	type newTodo struct {
		Title string `json:"title" validate:"required,min=3"`
		Prio  int    `query:"prio" validate:"gte=1,lte=5"`
		Items []item `json:"items" validate:"dive"`
	}
	errc := make(chan error, 1)
	base := start(t, celeris.Config{Validator: playground{validator.New()}, ErrorHandler: func(c *celeris.Context, err error) {
		errc <- err
		celeris.DefaultErrorHandler(c, err)
	}}, func(s *celeris.Server) {
		s.POST("/todos", func(c *celeris.Context) error {
			var in newTodo
			if err := c.Bind(&in); err != nil {
				return err
			}
			return c.String(201, in.Title)
		})
		s.POST("/json", func(c *celeris.Context) error {
			var in newTodo
			if err := c.BindJSON(&in); err != nil {
				return err
			}
			return c.String(201, in.Title)
		})
	})
	cl := clients()["h1"]
	for _, path := range []string{"/todos?prio=9", "/json?prio=9"} {
		resp, err := cl.Post(base+path, "application/json", bytes.NewReader([]byte(`{"title":"x","items":[{"sku":"a"},{}]}`)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		err = <-errc
		want := "invalid request: title must satisfy min=3; prio must satisfy lte=5; items[1].sku is required"
		if path == "/json?prio=9" { // BindJSON binds the body only: prio stays 0
			want = "invalid request: title must satisfy min=3; prio must satisfy gte=1; items[1].sku is required"
		}
		if resp.StatusCode != 400 || string(b) != want {
			t.Errorf("%s: %d %q\nwant %q", path, resp.StatusCode, b, want)
		}
		var be *celeris.BindError
		if !errors.As(err, &be) || len(be.Fields) != 3 {
			t.Fatalf("%s: %#v", path, err)
		}
		f := be.Fields[0]
		if f.Field != "title" || f.StructField != "Title" || f.Rule != "min" || f.Param != "3" || f.Value != "x" || f.Source != "validate" {
			t.Errorf("%s: title field %+v", path, f)
		}
		if f := be.Fields[2]; f.Field != "items[1].sku" || f.StructField != "Items[1].SKU" || f.Rule != "required" {
			t.Errorf("%s: nested field %+v", path, f)
		}
		var ve validator.ValidationErrors
		if !errors.As(err, &ve) || len(ve) != 3 || ve[1].Tag() != be.Fields[1].Rule {
			t.Errorf("%s: errors.As(validator.ValidationErrors): %v", path, err)
		}
		var fe validator.FieldError
		if !errors.As(be.Fields[0], &fe) || fe.Param() != "3" {
			t.Errorf("%s: errors.As(validator.FieldError): %v", path, be.Fields[0])
		}
	}
	resp, err := cl.Post(base+"/todos?prio=2", "application/json", bytes.NewReader([]byte(`{"title":"xyz"}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Errorf("valid: %d", resp.StatusCode)
	}
}
