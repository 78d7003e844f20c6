package celeris_test

import (
	"bytes"
	"context"
	"errors"
	"log"
	"net/http"
	"os/signal"
	"syscall"
	"time"

	"github.com/celeris-dev/celeris"
)

func Example() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	s.GET("/hello/:name", func(c *celeris.Context) error {
		return c.String(http.StatusOK, "hello "+c.Param("name"))
	})
	// A handler that never blocks may run on its connection's event loop.
	s.GET("/ping", func(c *celeris.Context) error {
		return c.String(http.StatusOK, "pong")
	}).Inline()
	go func() { log.Println(s.Start()) }()
}

func ExampleServer_Group() {
	s := celeris.New(celeris.Config{})
	auth := func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if c.Header("Authorization") == "" {
				return celeris.NewHTTPError(http.StatusUnauthorized, "login first")
			}
			return next(c)
		}
	}
	api := s.Group("/api", auth)
	v1 := api.Group("/v1")
	v1.GET("/users/:id", func(c *celeris.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"id": c.Param("id")})
	})
}

func ExampleServer_Use() {
	s := celeris.New(celeris.Config{})
	s.Use(func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			start := time.Now()
			err := next(c)
			log.Printf("%s %s %d %v", c.Method(), c.Path(), c.StatusCode(), time.Since(start))
			return err
		}
	})
}

func ExampleContext_BindJSON() {
	s := celeris.New(celeris.Config{})
	type user struct {
		Name string `json:"name"`
	}
	s.POST("/users", func(c *celeris.Context) error {
		var u user
		if err := c.BindJSON(&u); err != nil {
			return err // 400 for malformed JSON, 415 for another content type
		}
		return c.JSON(http.StatusCreated, u)
	})
}

func ExampleContext_Stream() {
	s := celeris.New(celeris.Config{})
	s.GET("/count", func(c *celeris.Context) error {
		w, err := c.Stream(http.StatusOK, "text/plain")
		if err != nil {
			return err
		}
		for i := 0; i < 3; i++ {
			if _, err := w.Write([]byte("tick\n")); err != nil {
				return err
			}
			_ = w.Flush() // chunked on HTTP/1.1, a DATA frame on HTTP/2
		}
		return nil
	})
}

func ExampleContext_SSE() {
	s := celeris.New(celeris.Config{})
	s.GET("/events", func(c *celeris.Context) error {
		sse, err := c.SSE()
		if err != nil {
			return err
		}
		for i := 0; i < 5; i++ {
			select {
			case <-c.Context().Done(): // the client went away
				return nil
			case <-time.After(100 * time.Millisecond):
			}
			if err := sse.Send(celeris.Event{Event: "tick", Data: "hello"}); err != nil {
				return err
			}
		}
		return nil
	})
}

func ExampleServer_Shutdown() {
	s := celeris.New(celeris.Config{Addr: ":8080"})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(shutdownCtx) // in-flight requests finish first
	}()
	if err := s.Start(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

func ExampleAdapt() {
	s := celeris.New(celeris.Config{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("hello from net/http"))
	})
	// Any net/http handler, streaming both ways; Flush works.
	s.Any("/legacy/*rest", celeris.Adapt(http.StripPrefix("/legacy", mux)))
}

func ExampleWrapMiddleware() {
	s := celeris.New(celeris.Config{})
	secure := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Frame-Options", "DENY")
			next.ServeHTTP(w, r)
		})
	}
	s.Use(celeris.WrapMiddleware(secure))
}

func ExampleServer_Handler() {
	s := celeris.New(celeris.Config{})
	s.GET("/ping", func(c *celeris.Context) error { return c.String(200, "pong") })
	// The same routes under net/http (or httptest.NewServer).
	_ = http.ListenAndServe(":8081", s.Handler())
}

func ExampleServer_Pre() {
	s := celeris.New(celeris.Config{})
	// Before routing: honour X-HTTP-Method-Override on POST.
	s.Pre(func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if m := c.Header("X-HTTP-Method-Override"); m != "" && c.Method() == http.MethodPost {
				c.SetMethod(m)
			}
			return next(c)
		}
	})
}

func ExampleServer_NotFound() {
	s := celeris.New(celeris.Config{})
	s.NotFound(func(c *celeris.Context) error {
		return c.JSON(http.StatusNotFound, map[string]string{"error": "no route for " + c.Path()})
	})
}

func ExampleRoute_Inline() {
	s := celeris.New(celeris.Config{})
	// Never blocks: runs on its connection's event loop, no goroutine hand-off.
	s.GET("/health", func(c *celeris.Context) error { return c.NoContent(http.StatusNoContent) }).Inline()
}

func ExampleContext_SetCookie() {
	s := celeris.New(celeris.Config{})
	s.GET("/login", func(c *celeris.Context) error {
		if err := c.SetCookie(&http.Cookie{Name: "session", Value: "abc", Path: "/", HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode}); err != nil {
			return err
		}
		return c.String(http.StatusOK, "welcome")
	})
}

func ExampleContext_FormFile() {
	s := celeris.New(celeris.Config{})
	s.POST("/avatar", func(c *celeris.Context) error {
		fh, err := c.FormFile("avatar") // 400 when missing, 415 for another content type
		if err != nil {
			return err
		}
		return c.String(http.StatusOK, fh.Filename)
	})
}

func ExampleContext_CaptureResponse() {
	s := celeris.New(celeris.Config{})
	// A middleware that transforms complete responses.
	upper := func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			status, body, ok, err := c.CaptureResponse(next)
			if !ok {
				return err
			}
			return c.Blob(status, "", bytes.ToUpper(body))
		}
	}
	s.GET("/shout", func(c *celeris.Context) error { return c.String(200, "hello") }, upper)
}
