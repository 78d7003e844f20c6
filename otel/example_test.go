package celerisotel_test

import (
	"context"
	"fmt"
	"net/http"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	celerisotel "github.com/celeris-dev/celeris/otel"
)

// Trace every request and carry the trace to the services a handler calls.
// In production the tracer provider exports (otlptracehttp, say) and is set
// globally with otel.SetTracerProvider; Middleware() then needs no option.
func Example() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer tp.Shutdown(context.Background())

	s := celeris.New(celeris.Config{Addr: "127.0.0.1:8080"})
	s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tp)))
	client := &http.Client{Transport: celerisotel.Transport(nil)} // injects traceparent and baggage
	s.GET("/users/:id", func(c *celeris.Context) error {
		_, span := tp.Tracer("app").Start(c.Context(), "load user") // a child of the server span
		span.End()
		_ = client // client.Do(req.WithContext(c.Context())) continues the trace downstream
		return c.String(200, "user "+c.Param("id"))
	})

	celeristest.Do(s, celeristest.NewRequest("GET", "/users/42", nil).
		WithHeader("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
	spans := rec.Ended() // the handler's span ends first
	child, server := spans[0], spans[1]
	fmt.Println(server.Name(), server.SpanKind(), "parent", server.Parent().SpanID())
	for _, kv := range server.Attributes() {
		switch kv.Key {
		case "http.route", "http.response.status_code", "url.path":
			fmt.Printf("  %s=%s\n", kv.Key, kv.Value.Emit())
		}
	}
	fmt.Println(child.Name(), child.SpanKind(), "child of the server span:", child.Parent().SpanID() == server.SpanContext().SpanID())
	// Output:
	// GET /users/:id server parent 00f067aa0ba902b7
	//   url.path=/users/42
	//   http.route=/users/:id
	//   http.response.status_code=200
	// load user internal child of the server span: true
}
