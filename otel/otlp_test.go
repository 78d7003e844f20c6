package celerisotel_test

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/celeris-dev/celeris"
	celerisotel "github.com/celeris-dev/celeris/otel"
)

// The server span exported over OTLP/HTTP (protobuf, gzip) to a receiver the
// test runs, decoded there: what a collector gets, attributes and the remote
// parent included.
func TestOTLPHTTPExport(t *testing.T) {
	got := make(chan *tracepb.Span, 16)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "unexpected "+r.URL.Path+" "+r.Header.Get("Content-Type"), http.StatusBadRequest)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req coltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(b, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				if ss.Scope.GetName() != "github.com/celeris-dev/celeris/otel" {
					continue
				}
				for _, sp := range ss.Spans {
					got <- sp
				}
			}
		}
		resp, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	}))
	defer receiver.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpointURL(receiver.URL+"/v1/traces"),
		otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	defer tp.Shutdown(context.Background())

	s := newServer()
	s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tp)))
	s.GET("/orders/:id", func(c *celeris.Context) error { return c.String(200, "order") })
	addr := start(t, s)
	req, _ := http.NewRequest("GET", "http://"+addr+"/orders/7", nil)
	req.Header.Set("traceparent", traceparent)
	resp, err := protos[0].client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitFor(t, func() bool {
		_ = tp.ForceFlush(ctx)
		return len(got) > 0
	})
	sp := <-got
	if sp.Name != "GET /orders/:id" || sp.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Fatalf("span %q kind %v", sp.Name, sp.Kind)
	}
	if hexID(sp.TraceId) != remoteTrace || hexID(sp.ParentSpanId) != remoteSpan {
		t.Errorf("trace %x parent %x, want %s %s", sp.TraceId, sp.ParentSpanId, remoteTrace, remoteSpan)
	}
	a := map[string]any{}
	for _, kv := range sp.Attributes {
		switch v := kv.Value.Value.(type) {
		case *commonpb.AnyValue_StringValue:
			a[kv.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			a[kv.Key] = v.IntValue
		}
	}
	wantAttrs(t, "exported span", a, map[string]any{
		"http.route":                "/orders/:id",
		"url.path":                  "/orders/7",
		"http.response.status_code": int64(200),
		"network.protocol.version":  "1.1",
		"http.request.method":       "GET",
	})
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("nothing exported")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func hexID(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}
