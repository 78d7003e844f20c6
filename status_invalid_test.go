package celeris

import (
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// invalidStatusRoutes registers handlers that answer with a status no final
// response may have.
func invalidStatusRoutes(s *Server) {
	s.GET("/string/:code", func(c *Context) error {
		code, _ := strconv.Atoi(c.Param("code"))
		return c.String(code, "body")
	})
	s.GET("/json/:code", func(c *Context) error {
		code, _ := strconv.Atoi(c.Param("code"))
		return c.JSON(code, 1)
	})
	s.GET("/stream/:code", func(c *Context) error {
		code, _ := strconv.Atoi(c.Param("code"))
		w, err := c.Stream(code, "text/plain")
		if err != nil {
			return err
		}
		_, err = w.Write([]byte("body"))
		return err
	})
	s.GET("/status/:code", func(c *Context) error {
		code, _ := strconv.Atoi(c.Param("code"))
		c.Status(code)
		return nil
	})
}

var invalidStatusPaths = func() []string {
	var p []string
	for _, kind := range []string{"string", "json", "stream", "status"} {
		for _, code := range []string{"42", "101", "1000"} {
			p = append(p, "/"+kind+"/"+code)
		}
	}
	return p
}()

// TestInvalidStatusIs500: a final response with a status outside 200-999 (42,
// 1000, or a 1xx given to String/JSON/Stream) is a programmer error: as net/http
// panics in WriteHeader, the handler panics, the client gets 500 on every
// protocol and the panic is logged once.
func TestInvalidStatusIs500(t *testing.T) {
	t.Parallel()
	var logs lockedBuffer
	_, addr := startServer(t, Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, invalidStatusRoutes)
	forEachProto(t, func(t *testing.T, cl *http.Client, proto string) {
		for _, path := range invalidStatusPaths {
			before := strings.Count(logs.String(), "level=ERROR")
			resp, err := cl.Get("http://" + addr + path)
			if err != nil {
				t.Errorf("%s: %v", path, err)
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 500 || string(body) != "Internal Server Error" {
				t.Errorf("%s: %d %q, want 500", path, resp.StatusCode, body)
			}
			if n := strings.Count(logs.String(), "level=ERROR") - before; n != 1 {
				t.Errorf("%s: %d ERROR records, want 1:\n%s", path, n, logs.String())
			}
		}
	})
}

// TestInvalidStatusNoNetwork: the server answers the same without a network
// (the path celeristest takes).
func TestInvalidStatusNoNetwork(t *testing.T) {
	s := New(Config{Logger: slog.New(slog.DiscardHandler)})
	invalidStatusRoutes(s)
	s.Handler()
	for _, path := range invalidStatusPaths {
		rec := &statusRecorder{}
		req := &httpmsg.Request{Method: "GET", Path: path, RequestURI: path, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
		s.prepare(req)
		s.serve(req, rec)
		if rec.status != 500 {
			t.Errorf("%s: status %d, want 500", path, rec.status)
		}
	}
}

// statusRecorder records the status of a response.
type statusRecorder struct{ status int }

func (r *statusRecorder) WriteResponse(status int, _ []httpmsg.Field, _ []byte) error {
	r.status = status
	return nil
}
func (r *statusRecorder) WriteHeader(status int, _ []httpmsg.Field) error {
	r.status = status
	return nil
}
func (r *statusRecorder) Write(p []byte) (int, error)       { return len(p), nil }
func (r *statusRecorder) Flush() error                      { return nil }
func (r *statusRecorder) End(trailer []httpmsg.Field) error { return nil }
