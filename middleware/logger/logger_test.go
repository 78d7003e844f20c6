package logger_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/logger"
	"github.com/celeris-dev/celeris/middleware/requestid"
)

// recorder is a slog.Handler that keeps records as attribute maps.
type recorder struct {
	mu      sync.Mutex
	level   slog.Level
	records []map[string]any
}

func (r *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler           { return r }
func (r *recorder) WithGroup(string) slog.Handler                { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	m := map[string]any{"msg": rec.Message, "level": rec.Level}
	rec.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.Any()
		return true
	})
	r.mu.Lock()
	r.records = append(r.records, m)
	r.mu.Unlock()
	return nil
}

func (r *recorder) take() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.records
	r.records = nil
	return out
}

// wait takes the records once there are at least n, or after 5 s: a record is
// written when the handler chain returns, which for a streamed answer can be
// after the client has it.
func (r *recorder) wait(n int) []map[string]any {
	testkit.Until(5*time.Second, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.records) >= n
	})
	return r.take()
}

func TestLogger(t *testing.T) {
	rec := &recorder{}
	quiet := &recorder{level: slog.LevelInfo}
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(requestid.Default(), logger.New(logger.Config{
			Logger: slog.New(rec),
			Skip:   func(c *celeris.Context) bool { return c.Path() == "/health" },
		}))
		s.GET("/ok", func(c *celeris.Context) error { return c.String(201, "ok") })
		s.GET("/http-error", func(c *celeris.Context) error { return celeris.NewHTTPError(403, "no") })
		s.GET("/error", func(c *celeris.Context) error { return errors.New("db down") })
		s.GET("/status-only", func(c *celeris.Context) error { c.Status(202); return nil })
		s.GET("/health", func(c *celeris.Context) error { return c.String(200, "up") })
		s.GET("/debug", func(c *celeris.Context) error { return c.String(200, "d") },
			logger.New(logger.Config{Logger: slog.New(quiet), Level: slog.LevelDebug}))
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		url := "http://" + addr
		rec.take()
		tests := []struct {
			path   string
			status int
			err    string
		}{
			{path: "/ok", status: 201},
			{path: "/http-error", status: 403, err: "403 no"},
			{path: "/error", status: 500, err: "db down"},
			{path: "/status-only", status: 202},
			{path: "/missing", status: 404, err: "404 Not Found"}, // celeris.ErrNotFound
		}
		for _, tt := range tests {
			resp, _ := mwtest.Get(t, client, url+tt.path, mwtest.H("X-Request-ID", "rid-1"))
			if resp.StatusCode != tt.status {
				t.Errorf("%s: status %d, want %d", tt.path, resp.StatusCode, tt.status)
			}
			recs := rec.wait(1)
			if len(recs) != 1 {
				t.Fatalf("%s: %d records", tt.path, len(recs))
			}
			r := recs[0]
			if r["msg"] != "request" || r["level"] != slog.LevelInfo || r["method"] != "GET" ||
				r["path"] != tt.path || r["status"] != int64(tt.status) || r["request_id"] != "rid-1" {
				t.Errorf("%s: record %v", tt.path, r)
			}
			if lat, _ := r["latency"].(time.Duration); lat <= 0 {
				t.Errorf("%s: latency %v", tt.path, r["latency"])
			}
			if e, _ := r["error"].(string); e != tt.err {
				t.Errorf("%s: error attr %q, want %q", tt.path, e, tt.err)
			}
		}
		if r := rec.take(); len(r) != 0 {
			t.Fatalf("extra records %v", r)
		}
		mwtest.Get(t, client, url+"/health", nil)
		if r := rec.take(); len(r) != 0 {
			t.Errorf("skipped request logged: %v", r)
		}
		mwtest.Get(t, client, url+"/debug", nil)
		if r := quiet.take(); len(r) != 0 {
			t.Errorf("disabled level logged: %v", r)
		}
		rec.wait(1) // the outer logger's record of /debug
	})
}

// TestLoggerRecordsErrorHandlerStatus: the record holds the status the client got,
// whatever the configured error handler chose (a custom handler's 422, not the
// 500 the error alone would give), over HTTP/1.1 and h2c.
func TestLoggerRecordsErrorHandlerStatus(t *testing.T) {
	errInvalid := errors.New("invalid input")
	rec := &recorder{}
	_, addr := mwtest.StartConfig(t, celeris.Config{
		ErrorHandler: func(c *celeris.Context, err error) {
			if errors.Is(err, errInvalid) {
				_ = c.JSON(422, map[string]string{"error": err.Error()})
				return
			}
			celeris.DefaultErrorHandler(c, err)
		},
	}, func(s *celeris.Server) {
		s.Use(logger.New(logger.Config{Logger: slog.New(rec)}))
		s.GET("/invalid", func(c *celeris.Context) error { return errInvalid })
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		rec.take()
		resp, _ := mwtest.Get(t, client, "http://"+addr+"/invalid", nil)
		if resp.StatusCode != 422 {
			t.Fatalf("status %d, want 422", resp.StatusCode)
		}
		recs := rec.wait(1)
		if len(recs) != 1 || recs[0]["status"] != int64(422) || recs[0]["error"] != "invalid input" {
			t.Fatalf("records %v, want one with status 422", recs)
		}
	})
}

// TestLoggerRouteAndAttrs: the record names the matched route pattern (not the
// path) and carries the attributes Config.Attrs takes from the Context.
func TestLoggerRouteAndAttrs(t *testing.T) {
	rec := &recorder{}
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(func(next celeris.HandlerFunc) celeris.HandlerFunc {
			return func(c *celeris.Context) error {
				c.Set("user", "ada")
				return next(c)
			}
		}, logger.New(logger.Config{
			Logger: slog.New(rec),
			Attrs: func(c *celeris.Context) []slog.Attr {
				u, _ := c.Get("user")
				return []slog.Attr{slog.Any("user", u), slog.String("tenant", "acme")}
			},
		}))
		s.GET("/users/:id", func(c *celeris.Context) error { return c.String(200, "u") })
	})
	mwtest.Run(t, addr, func(t *testing.T, client *http.Client) {
		rec.take()
		mwtest.Get(t, client, "http://"+addr+"/users/7", nil)
		mwtest.Get(t, client, "http://"+addr+"/nope", nil)
		recs := rec.wait(2)
		if len(recs) != 2 {
			t.Fatalf("%d records", len(recs))
		}
		// A record is written when the handler chain returns, which on HTTP/2
		// can be after the client has the response: the next request (on
		// another worker) may be logged first.
		if recs[0]["path"] == "/nope" {
			recs[0], recs[1] = recs[1], recs[0]
		}
		if r := recs[0]; r["route"] != "/users/:id" || r["path"] != "/users/7" || r["user"] != "ada" || r["tenant"] != "acme" {
			t.Errorf("record %v", r)
		}
		if r := recs[1]; r["route"] != nil || r["status"] != int64(404) || r["tenant"] != "acme" {
			t.Errorf("unmatched record %v", r)
		}
		if _, ok := recs[0]["latency"].(time.Duration); !ok {
			t.Errorf("latency is %T, want time.Duration", recs[0]["latency"])
		}
	})
}
