package celerisotel_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/celeris-dev/celeris"
	celerisotel "github.com/celeris-dev/celeris/otel"
)

const (
	remoteTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	remoteSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + remoteTrace + "-" + remoteSpan + "-01"
)

// A request's server span and metrics over h1 and h2c, on both engines:
// semconv attributes, the incoming trace context and baggage, the span on the
// request's context (a handler's span is its child), 5xx as an error, active
// requests.
func TestServerSpanAndMetrics(t *testing.T) {
	for _, e := range engines {
		for _, p := range protos {
			t.Run(string(e)+"/"+p.name, func(t *testing.T) { testServerSpanAndMetrics(t, e, p) })
		}
	}
}

func testServerSpanAndMetrics(t *testing.T, e celeris.Engine, p protocol) {
	tm := newTelemetry(t)
	s := newServerOn(e)
	s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tm.tp), celerisotel.WithMeterProvider(tm.mp)))
	var activeSeen int64 = -1
	s.GET("/users/:id", func(c *celeris.Context) error {
		ctx := c.Context()
		if got := trace.SpanContextFromContext(ctx).TraceID().String(); got != remoteTrace {
			return c.String(400, "trace "+got)
		}
		if v := baggage.FromContext(ctx).Member("tenant").Value(); v != "acme" {
			return c.String(400, "baggage "+v)
		}
		_, child := tm.tp.Tracer("app").Start(ctx, "load user")
		child.End()
		if sum, ok := tm.metrics(t)["http.server.active_requests"].(metricdata.Sum[int64]); ok && len(sum.DataPoints) == 1 {
			activeSeen = sum.DataPoints[0].Value
		}
		return c.String(200, "user "+c.Param("id"))
	})
	s.POST("/fail", func(c *celeris.Context) error {
		if _, err := c.Body(); err != nil {
			return err
		}
		return errors.New("database down")
	})
	addr := start(t, s)
	_, port, _ := net.SplitHostPort(addr)
	client := p.client()
	defer client.CloseIdleConnections()

	req, _ := http.NewRequest("GET", "http://"+addr+"/users/42", nil)
	req.Header.Set("traceparent", traceparent)
	req.Header.Set("baggage", "tenant=acme")
	req.Header.Set("User-Agent", "celerisotel-test/1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "user 42" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}

	srv := tm.waitSpan(t, "GET /users/:id")
	if srv.SpanKind() != trace.SpanKindServer {
		t.Errorf("kind %v, want server", srv.SpanKind())
	}
	if srv.Parent().TraceID().String() != remoteTrace || srv.Parent().SpanID().String() != remoteSpan || !srv.Parent().IsRemote() {
		t.Errorf("parent %v, want the remote span %s", srv.Parent(), remoteSpan)
	}
	wantAttrs(t, "server span", attrs(srv.Attributes()), map[string]any{
		"http.request.method":       "GET",
		"http.route":                "/users/:id",
		"http.response.status_code": int64(200),
		"url.scheme":                "http",
		"url.path":                  "/users/42",
		"network.protocol.version":  p.version,
		"server.address":            "127.0.0.1",
		"server.port":               mustInt(t, port),
		"client.address":            "127.0.0.1",
		"network.peer.address":      "127.0.0.1",
		"user_agent.original":       "celerisotel-test/1",
	})
	if _, ok := attrs(srv.Attributes())["url.query"]; ok {
		t.Errorf("a request without a query has url.query")
	}
	if srv.Status().Code != codes.Unset {
		t.Errorf("status %v, want unset", srv.Status())
	}
	child := tm.waitSpan(t, "load user")
	if child.Parent().SpanID() != srv.SpanContext().SpanID() {
		t.Errorf("handler's span parent %v, want the server span %v", child.Parent().SpanID(), srv.SpanContext().SpanID())
	}
	if activeSeen != 1 {
		t.Errorf("http.server.active_requests during the request = %d, want 1", activeSeen)
	}

	resp, err = client.Post("http://"+addr+"/fail?q=a%20b&sig=s3cr3t&x", "text/plain", strings.NewReader("0123456789"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	fail := tm.waitSpan(t, "POST /fail")
	if fail.Status().Code != codes.Error || fail.Status().Description != "database down" {
		t.Errorf("status %+v, want Error \"database down\"", fail.Status())
	}
	if fail.Parent().IsValid() {
		t.Errorf("a request without traceparent has parent %v", fail.Parent())
	}
	wantAttrs(t, "5xx span", attrs(fail.Attributes()), map[string]any{
		"http.response.status_code": int64(500),
		"error.type":                "500",
		"url.path":                  "/fail",
		"url.query":                 "q=a%20b&sig=REDACTED&x",
	})

	resp, err = client.Get("http://" + addr + "/nowhere")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	nf := tm.waitSpan(t, "GET")
	if _, ok := attrs(nf.Attributes())["http.route"]; ok || nf.Status().Code != codes.Unset {
		t.Errorf("404: attributes %v status %v: want no route, status unset", nf.Attributes(), nf.Status())
	}

	m := tm.metrics(t)
	dur, ok := m["http.server.request.duration"].(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("no duration histogram: %v", m)
	}
	var okPoint, failPoint *metricdata.HistogramDataPoint[float64]
	for i, dp := range dur.DataPoints {
		a := attrs(dp.Attributes.ToSlice())
		switch a["http.route"] {
		case "/users/:id":
			okPoint = &dur.DataPoints[i]
			wantAttrs(t, "duration", a, map[string]any{
				"http.request.method": "GET", "url.scheme": "http", "http.response.status_code": int64(200),
				"network.protocol.name": "http", "network.protocol.version": p.version,
			})
		case "/fail":
			failPoint = &dur.DataPoints[i]
			wantAttrs(t, "duration (5xx)", a, map[string]any{"error.type": "500", "http.response.status_code": int64(500)})
		}
	}
	if okPoint == nil || failPoint == nil || okPoint.Count != 1 || failPoint.Count != 1 {
		t.Fatalf("duration points %+v", dur.DataPoints)
	}
	if len(okPoint.Bounds) != len(celerisotel.DurationBuckets) || okPoint.Bounds[0] != 0.005 || okPoint.Bounds[len(okPoint.Bounds)-1] != 10 {
		t.Errorf("bounds %v, want %v", okPoint.Bounds, celerisotel.DurationBuckets)
	}
	if okPoint.Sum <= 0 || okPoint.Sum > 5 {
		t.Errorf("duration sum %v s", okPoint.Sum)
	}
	active := m["http.server.active_requests"].(metricdata.Sum[int64])
	if len(active.DataPoints) != 2 || active.IsMonotonic { // GET and POST
		t.Errorf("active requests: %+v", active)
	}
	for _, dp := range active.DataPoints {
		if dp.Value != 0 {
			t.Errorf("active requests after: %v", dp)
		}
	}
	reqSize := m["http.server.request.body.size"].(metricdata.Histogram[int64])
	if sum := sumFor(reqSize, "/fail"); sum != 10 {
		t.Errorf("request body size of /fail = %d, want 10", sum)
	}
	respSize := m["http.server.response.body.size"].(metricdata.Histogram[int64])
	if sum := sumFor(respSize, "/users/:id"); sum != int64(len("user 42")) {
		t.Errorf("response body size = %d, want %d", sum, len("user 42"))
	}
}

// sumFor returns the sum of h's data point of route.
func sumFor(h metricdata.Histogram[int64], route string) int64 {
	for _, dp := range h.DataPoints {
		if v, _ := dp.Attributes.Value(attribute.Key("http.route")); v.AsString() == route {
			return dp.Sum
		}
	}
	return -1
}

func mustInt(t *testing.T, s string) int64 {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return int64(n)
}

// Outgoing requests carry the handler's trace context and baggage (Transport
// and Inject), and the caller's request is left as it was.
func TestPropagationOut(t *testing.T) {
	tm := newTelemetry(t)
	got := make(chan http.Header, 2)
	downstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
	}))
	defer downstream.Close()

	s := newServer()
	s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tm.tp), celerisotel.WithMeterProvider(tm.mp)))
	client := &http.Client{Transport: celerisotel.Transport(nil)}
	s.GET("/call", func(c *celeris.Context) error {
		req, _ := http.NewRequestWithContext(c.Context(), "GET", downstream.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if req.Header.Get("traceparent") != "" {
			return c.String(500, "Transport modified the caller's request")
		}
		out, _ := http.NewRequest("GET", downstream.URL, nil)
		celerisotel.Inject(c.Context(), out.Header)
		resp, err = http.DefaultClient.Do(out)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return c.String(200, "ok")
	})
	addr := start(t, s)
	req, _ := http.NewRequest("GET", "http://"+addr+"/call", nil)
	req.Header.Set("traceparent", traceparent)
	req.Header.Set("baggage", "tenant=acme")
	resp, err := protos[0].client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	srv := tm.waitSpan(t, "GET /call")
	want := "00-" + remoteTrace + "-" + srv.SpanContext().SpanID().String() + "-01"
	for _, how := range []string{"Transport", "Inject"} {
		h := <-got
		if tp := h.Get("traceparent"); tp != want {
			t.Errorf("%s: traceparent %q, want %q (the server span)", how, tp, want)
		}
		if b := h.Get("baggage"); b != "tenant=acme" {
			t.Errorf("%s: baggage %q, want tenant=acme", how, b)
		}
	}
}

// Malformed trace context and baggage: the request is served, its span is a
// new root, and nothing of the bad fields reaches the context.
func TestMalformedPropagation(t *testing.T) {
	tm := newTelemetry(t)
	s := newServer()
	s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tm.tp), celerisotel.WithMeterProvider(tm.mp)))
	s.GET("/p", func(c *celeris.Context) error {
		return c.String(200, strconv.Itoa(baggage.FromContext(c.Context()).Len()))
	})
	addr := start(t, s)
	client := protos[0].client()
	for i, tc := range []struct{ traceparent, baggage string }{
		{traceparent: "garbage", baggage: "=;=;"},
		{traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01"}, // zero trace ID
		{traceparent: "00-" + remoteTrace + "-0000000000000000-01"},              // zero span ID
		{traceparent: "ff-" + remoteTrace + "-" + remoteSpan + "-01"},            // version ff is invalid
		{traceparent: "00-" + strings.ToUpper(remoteTrace) + "-" + remoteSpan + "-01"},
		{baggage: strings.Repeat("k=v,", 5000)}, // over the W3C limits
		{baggage: "k=%zz"},
	} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/p", nil)
		if tc.traceparent != "" {
			req.Header.Set("traceparent", tc.traceparent)
		}
		if tc.baggage != "" {
			req.Header.Set("baggage", tc.baggage)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "0" {
			t.Errorf("case %d: %d %q, want 200 and no baggage", i, resp.StatusCode, body)
		}
		var sp sdktrace.ReadOnlySpan
		for deadline := time.Now().Add(5 * time.Second); sp == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if ended := tm.spans.Ended(); len(ended) > i {
				sp = ended[i]
			}
		}
		if sp == nil {
			t.Fatalf("case %d: no span", i)
		}
		if sp.Parent().IsValid() {
			t.Errorf("case %d: parent %v from a malformed traceparent", i, sp.Parent())
		}
	}
}

// Baggage in several field lines (W3C Baggage §3.3.1 allows it): every
// member reaches the context.
func TestBaggageFieldLines(t *testing.T) {
	tm := newTelemetry(t)
	s := newServer()
	s.Use(celerisotel.Middleware(celerisotel.WithTracerProvider(tm.tp), celerisotel.WithMeterProvider(tm.mp)))
	s.GET("/b", func(c *celeris.Context) error {
		b := baggage.FromContext(c.Context())
		return c.String(200, b.Member("a").Value()+","+b.Member("b").Value())
	})
	addr := start(t, s)
	req, _ := http.NewRequest("GET", "http://"+addr+"/b", nil)
	req.Header.Add("baggage", "a=1")
	req.Header.Add("baggage", "b=2")
	resp, err := protos[0].client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "1,2" {
		t.Errorf("baggage seen %q, want 1,2", body)
	}
}
