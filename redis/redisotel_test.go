package celerisredis_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	goredis "github.com/redis/go-redis/v9"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/middleware/ratelimit"
	"github.com/celeris-dev/celeris/middleware/timeout"
	celerisredis "github.com/celeris-dev/celeris/redis"
)

// A go-redis client instrumented with redisotel, as the guide shows, traces the
// rate-limit store's script as a child of the request's span: the store passes
// the request's context (and its deadline) down, with and without
// ContextTimeoutEnabled. Against a real redis-server, over a socket.
func TestRedisOTelSpans(t *testing.T) {
	admin := startRedis(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	for _, cte := range []bool{false, true} {
		rdb := goredis.NewClient(&goredis.Options{Addr: admin.Options().Addr, ContextTimeoutEnabled: cte})
		t.Cleanup(func() { rdb.Close() })
		if err := redisotel.InstrumentTracing(rdb, redisotel.WithTracerProvider(tp)); err != nil {
			t.Fatal(err)
		}
		store := celerisredis.NewRateLimitStore(rdb, "otel:")
		// A request span, as celerisotel.Middleware makes one.
		traced := func(next celeris.HandlerFunc) celeris.HandlerFunc {
			return func(c *celeris.Context) error {
				ctx, span := tp.Tracer("test").Start(c.Context(), "request")
				defer span.End()
				c.SetContext(ctx)
				return next(c)
			}
		}
		_, addr := celeristest.Serve(t, quiet(), func(s *celeris.Server) {
			s.GET("/", func(c *celeris.Context) error { return c.String(200, "ok") }, traced,
				timeout.New(timeout.Config{Timeout: time.Second}), ratelimit.New(ratelimit.Config{Store: store, Logger: discard}))
		})
		rec.Reset()
		client := &http.Client{Timeout: 5 * time.Second}
		if resp, body := do(t, client, "GET", "http://"+addr+"/"); resp.StatusCode != 200 {
			t.Fatalf("ContextTimeoutEnabled=%v: %d %q", cte, resp.StatusCode, body)
		}
		var parent sdktrace.ReadOnlySpan
		var cmds []sdktrace.ReadOnlySpan
		for _, s := range rec.Ended() {
			if s.Name() == "request" {
				parent = s
			} else if strings.HasPrefix(s.Name(), "eval") { // evalsha, or eval the first time
				cmds = append(cmds, s)
			}
		}
		if parent == nil || len(cmds) == 0 {
			t.Fatalf("ContextTimeoutEnabled=%v: request span %v, command spans %d", cte, parent != nil, len(cmds))
		}
		for _, s := range cmds {
			if s.Parent().SpanID() != parent.SpanContext().SpanID() {
				t.Errorf("ContextTimeoutEnabled=%v: span %q has parent %v, want the request's %v",
					cte, s.Name(), s.Parent().SpanID(), parent.SpanContext().SpanID())
			}
		}
	}
}
