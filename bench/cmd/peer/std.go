package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"github.com/go-chi/chi/v5"
	"github.com/labstack/echo/v4"
)

// stdServer is the net/http server shared by nethttp, gin, echo and chi:
// HTTP/1.1 and prior-knowledge h2c on one port (Go 1.24+ Protocols).
type stdServer struct {
	srv *http.Server
}

func newStdServer(h http.Handler) server {
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &stdServer{srv: &http.Server{Handler: h, Protocols: &p}}
}

func (s *stdServer) serve(ln net.Listener) error {
	if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// serveTLS serves HTTP/1.1 and HTTP/2 over TLS (ALPN h2, http/1.1) with
// cert: the same net/http server, its Protocols widened to HTTP/2 over TLS.
func (s *stdServer) serveTLS(ln net.Listener, cert tls.Certificate) error {
	s.srv.Protocols.SetHTTP2(true)
	s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	if err := s.srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *stdServer) shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

func nethttpHandler() http.Handler {
	mux := http.NewServeMux()
	text := func(w http.ResponseWriter, s string) {
		w.Header().Set("Content-Type", textPlain)
		io.WriteString(w, s)
	}
	mux.HandleFunc("GET /bench", func(w http.ResponseWriter, r *http.Request) { text(w, "OK") })
	mux.HandleFunc("GET /json", func(w http.ResponseWriter, r *http.Request) {
		b, err := json.Marshal(hello)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", appJSON)
		w.Write(b)
	})
	mux.HandleFunc("GET /users/{id}/posts/{postId}", func(w http.ResponseWriter, r *http.Request) {
		text(w, "user="+r.PathValue("id")+" post="+r.PathValue("postId"))
	})
	mux.HandleFunc("POST /upload", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		text(w, strconv.FormatInt(n, 10))
	})
	mux.HandleFunc("GET /download", func(w http.ResponseWriter, r *http.Request) {
		n, ok := downloadSize(r.URL.Query().Get("size"))
		if !ok {
			http.Error(w, "bad size", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", octetStream)
		w.Write(payload[:n])
	})
	return mux
}

func ginHandler() http.Handler {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New() // no logger or recovery middleware: bare, like the others
	r.GET("/bench", func(c *gin.Context) { c.String(http.StatusOK, "OK") })
	r.GET("/json", func(c *gin.Context) { c.JSON(http.StatusOK, hello) })
	r.GET("/users/:id/posts/:postId", func(c *gin.Context) {
		c.String(http.StatusOK, "user="+c.Param("id")+" post="+c.Param("postId"))
	})
	r.POST("/upload", func(c *gin.Context) {
		n, err := io.Copy(io.Discard, c.Request.Body)
		if err != nil {
			c.String(http.StatusBadRequest, err.Error())
			return
		}
		c.String(http.StatusOK, strconv.FormatInt(n, 10))
	})
	r.GET("/download", func(c *gin.Context) {
		n, ok := downloadSize(c.Query("size"))
		if !ok {
			c.String(http.StatusBadRequest, "bad size")
			return
		}
		c.Data(http.StatusOK, octetStream, payload[:n])
	})
	return r
}

func echoHandler() http.Handler {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/bench", func(c echo.Context) error { return c.String(http.StatusOK, "OK") })
	e.GET("/json", func(c echo.Context) error {
		// c.JSON's encoder appends a newline; Marshal keeps every peer's answer identical.
		b, err := json.Marshal(hello)
		if err != nil {
			return err
		}
		return c.JSONBlob(http.StatusOK, b)
	})
	e.GET("/users/:id/posts/:postId", func(c echo.Context) error {
		return c.String(http.StatusOK, "user="+c.Param("id")+" post="+c.Param("postId"))
	})
	e.POST("/upload", func(c echo.Context) error {
		n, err := io.Copy(io.Discard, c.Request().Body)
		if err != nil {
			return echo.NewHTTPError(http.StatusBadRequest, err.Error())
		}
		return c.String(http.StatusOK, strconv.FormatInt(n, 10))
	})
	e.GET("/download", func(c echo.Context) error {
		n, ok := downloadSize(c.QueryParam("size"))
		if !ok {
			return echo.NewHTTPError(http.StatusBadRequest, "bad size")
		}
		return c.Blob(http.StatusOK, octetStream, payload[:n])
	})
	return e
}

func chiHandler() http.Handler {
	r := chi.NewRouter()
	text := func(w http.ResponseWriter, s string) {
		w.Header().Set("Content-Type", textPlain)
		io.WriteString(w, s)
	}
	r.Get("/bench", func(w http.ResponseWriter, r *http.Request) { text(w, "OK") })
	r.Get("/json", func(w http.ResponseWriter, r *http.Request) {
		b, err := json.Marshal(hello)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", appJSON)
		w.Write(b)
	})
	r.Get("/users/{id}/posts/{postId}", func(w http.ResponseWriter, r *http.Request) {
		text(w, "user="+chi.URLParam(r, "id")+" post="+chi.URLParam(r, "postId"))
	})
	r.Post("/upload", func(w http.ResponseWriter, r *http.Request) {
		n, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		text(w, strconv.FormatInt(n, 10))
	})
	r.Get("/download", func(w http.ResponseWriter, r *http.Request) {
		n, ok := downloadSize(r.URL.Query().Get("size"))
		if !ok {
			http.Error(w, "bad size", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", octetStream)
		w.Write(payload[:n])
	})
	return r
}
