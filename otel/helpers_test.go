package celerisotel_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/net/http2"

	"github.com/celeris-dev/celeris"
)

// start serves s on 127.0.0.1:0 until the test ends and returns its address.
func start(t *testing.T, s *celeris.Server) string {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- s.Start() }()
	select {
	case <-s.Ready():
	case err := <-errc:
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		<-errc
	})
	return s.Addr().String()
}

// newServer returns a server on 127.0.0.1:0, on the default engine.
func newServer() *celeris.Server { return newServerOn(celeris.EngineAuto) }

// newServerOn returns a server on 127.0.0.1:0 on engine e.
func newServerOn(e celeris.Engine) *celeris.Server {
	return celeris.New(celeris.Config{Addr: "127.0.0.1:0", EventLoops: 1, Engine: e})
}

// engines are the engines the socket tests run on.
var engines = []celeris.Engine{celeris.EngineGnet, celeris.EngineStd}

// protocol is one way a client reaches the server.
type protocol struct {
	name    string
	version string // network.protocol.version the server should record
	client  func() *http.Client
}

var protos = []protocol{
	{name: "h1", version: "1.1", client: func() *http.Client {
		tr := &http.Transport{}
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP1(true)
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}},
	{name: "h2c", version: "2", client: func() *http.Client {
		tr := &http2.Transport{
			AllowHTTP: true,
			DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			},
		}
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}
	}},
}

// telemetry is an SDK tracer provider that records every span and a meter
// provider read by hand.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t *testing.T) *telemetry {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return &telemetry{spans: rec, tp: tp, reader: reader, mp: mp}
}

// waitSpan waits for the ended span named name: the middleware ends a span
// after the response went out, so the client may be told before.
func (tm *telemetry) waitSpan(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, s := range tm.spans.Ended() {
			if s.Name() == name {
				return s
			}
		}
		if time.Now().After(deadline) {
			var names []string
			for _, s := range tm.spans.Ended() {
				names = append(names, s.Name())
			}
			t.Fatalf("no ended span %q; ended: %q", name, names)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// metrics collects the metrics now.
func (tm *telemetry) metrics(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tm.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// attrs returns a span's or a data point's attributes as a map.
func attrs(kv []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kv))
	for _, a := range kv {
		m[string(a.Key)] = a.Value.AsInterface()
	}
	return m
}

// wantAttrs checks that got holds every attribute of want, equal.
func wantAttrs(t *testing.T, what string, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: %s = %v (present %v), want %v", what, k, g, ok, v)
		}
	}
}
