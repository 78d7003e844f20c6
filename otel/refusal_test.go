package celerisotel_test

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/middleware/secure"
	celerisotel "github.com/celeris-dev/celeris/otel"
)

// A request the HTTP/1.1 parser refuses (431) gets a server span and a
// measurement of http.server.request.duration through RefusalHeader, and the
// secure headers of the RefusalHeader it wraps; over a raw socket.
func TestRefusalSpanAndMetric(t *testing.T) {
	tm := newTelemetry(t)
	s := celeris.New(celeris.Config{Addr: "127.0.0.1:0", EventLoops: 1, MaxHeaderBytes: 16 << 10,
		RefusalHeader: celerisotel.RefusalHeader(secure.RefusalHeader(secure.Config{}, nil),
			celerisotel.WithTracerProvider(tm.tp), celerisotel.WithMeterProvider(tm.mp))})
	s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tm.tp), celerisotel.WithMeterProvider(tm.mp)))
	s.GET("/", func(c *celeris.Context) error { return c.String(200, "ok") })
	addr := start(t, s)

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	go func() {
		_, _ = conn.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 20<<10) + "\r\n\r\n"))
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != 431 || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("%v %v", resp, err)
	}

	span := tm.waitSpan(t, "HTTP")
	if span.SpanKind() != trace.SpanKindServer {
		t.Errorf("kind %v", span.SpanKind())
	}
	wantAttrs(t, "refusal span", attrs(span.Attributes()), map[string]any{
		"http.request.method":       "_OTHER",
		"http.response.status_code": int64(431),
	})
	h, ok := tm.metrics(t)["http.server.request.duration"].(metricdata.Histogram[float64])
	if !ok {
		t.Fatal("no http.server.request.duration")
	}
	found := false
	for _, dp := range h.DataPoints {
		if v, _ := dp.Attributes.Value("http.response.status_code"); v.AsInt64() == 431 && dp.Count == 1 {
			found = true
		}
	}
	if !found {
		t.Errorf("no data point of status 431: %+v", h.DataPoints)
	}
}
