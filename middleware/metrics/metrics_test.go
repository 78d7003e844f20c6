package metrics_test

import (
	"bufio"
	"bytes"
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/testkit"
	"github.com/celeris-dev/celeris/middleware/internal/mwtest"
	"github.com/celeris-dev/celeris/middleware/metrics"
)

// exposition is a parsed scrape.
type exposition struct {
	help, typ map[string]string
	samples   map[string]float64 // "name{labels}" -> value
	order     []string
}

func parse(t *testing.T, body string) exposition {
	t.Helper()
	e := exposition{help: map[string]string{}, typ: map[string]string{}, samples: map[string]float64{}}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# HELP "):
			name, text, _ := strings.Cut(line[len("# HELP "):], " ")
			e.help[name] = text
		case strings.HasPrefix(line, "# TYPE "):
			name, typ, _ := strings.Cut(line[len("# TYPE "):], " ")
			e.typ[name] = typ
		case line == "" || strings.HasPrefix(line, "#"):
			t.Errorf("unexpected line %q", line)
		default:
			i := strings.LastIndexByte(line, ' ')
			if i < 0 {
				t.Fatalf("malformed sample %q", line)
			}
			v, err := strconv.ParseFloat(line[i+1:], 64)
			if err != nil {
				t.Fatalf("sample %q: %v", line, err)
			}
			e.samples[line[:i]] = v
			e.order = append(e.order, line[:i])
		}
	}
	return e
}

func TestMetrics(t *testing.T) {
	m := metrics.New(metrics.Config{
		Skip: func(c *celeris.Context) bool { return c.Path() == "/metrics" },
	})
	_, addr := mwtest.Start(t, func(s *celeris.Server) {
		s.Use(m.Middleware())
		s.GET("/metrics", m.Handler(s))
		s.GET("/ok", func(c *celeris.Context) error { return c.String(200, "ok") })
		s.POST("/items", func(c *celeris.Context) error { return c.NoContent(201) })
		s.GET("/slow", func(c *celeris.Context) error {
			testkit.Slow(30 * time.Millisecond) // a sleep: the route's duration, read from the real clock, is what the histogram records
			return c.String(200, "slow")
		})
		s.GET("/unavailable", func(c *celeris.Context) error { return celeris.NewHTTPError(503, "") })
		s.GET("/odd", func(c *celeris.Context) error { return c.NoContent(299) })
		s.Handle("PURGE", "/cache", func(c *celeris.Context) error { return c.NoContent(204) })
	})
	client := mwtest.Client(t)
	url := "http://" + addr
	do := func(method, path string, n int) {
		for range n {
			mwtest.Do(t, client, method, url+path, nil, nil)
		}
	}
	do("GET", "/ok", 3)
	do("POST", "/items", 2)
	do("GET", "/slow", 1)
	do("GET", "/missing", 1)
	do("GET", "/unavailable", 1)
	do("GET", "/odd", 1)
	do("PURGE", "/cache", 2)
	do("GET", "/metrics", 1) // skipped

	resp, body := mwtest.Get(t, client, url+"/metrics", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("scrape: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	e := parse(t, body)
	for name, typ := range map[string]string{
		"celeris_http_requests_total":           "counter",
		"celeris_http_request_duration_seconds": "histogram",
		"celeris_open_connections":              "gauge",
		"celeris_active_requests":               "gauge",
		"celeris_active_streams":                "gauge",
		"celeris_tls_handshake_errors_total":    "counter",
	} {
		if e.typ[name] != typ || e.help[name] == "" {
			t.Errorf("%s: TYPE %q HELP %q", name, e.typ[name], e.help[name])
		}
	}
	wantCounts := map[string]float64{
		// route is the pattern, and "unmatched" for a 404, so that a client
		// probing random paths cannot grow the number of series.
		`celeris_http_requests_total{method="GET",route="/ok",status="200"}`:          3,
		`celeris_http_requests_total{method="GET",route="/slow",status="200"}`:        1,
		`celeris_http_requests_total{method="POST",route="/items",status="201"}`:      2,
		`celeris_http_requests_total{method="GET",route="unmatched",status="404"}`:    1,
		`celeris_http_requests_total{method="GET",route="/unavailable",status="503"}`: 1,
		`celeris_http_requests_total{method="GET",route="/odd",status="2xx"}`:         1,
		`celeris_http_requests_total{method="OTHER",route="/cache",status="204"}`:     2,
	}
	var total float64
	for k, v := range e.samples {
		if strings.HasPrefix(k, "celeris_http_requests_total") {
			total += v
			if wantCounts[k] != v {
				t.Errorf("%s = %v, want %v", k, v, wantCounts[k])
			}
		}
	}
	if total != 11 {
		t.Errorf("requests total %v, want 11", total)
	}

	const h = "celeris_http_request_duration_seconds"
	prev := -1.0
	var les []string
	for _, k := range e.order {
		if strings.HasPrefix(k, h+"_bucket{") {
			v := e.samples[k]
			if v < prev {
				t.Errorf("bucket %s = %v below the previous %v", k, v, prev)
			}
			prev = v
			les = append(les, k[len(h+`_bucket{le="`):len(k)-2])
		}
	}
	if got := strings.Join(les, ","); got != "0.005,0.01,0.025,0.05,0.1,0.25,0.5,1,2.5,5,10,+Inf" {
		t.Errorf("buckets %s", got)
	}
	if inf, count := e.samples[h+`_bucket{le="+Inf"}`], e.samples[h+"_count"]; inf != 11 || count != 11 {
		t.Errorf("+Inf %v count %v, want 11", inf, count)
	}
	if e.samples[h+`_bucket{le="0.025"}`] > 10 {
		t.Errorf("the 30 ms request fell in le=0.025: %v", e.samples[h+`_bucket{le="0.025"}`])
	}
	if sum := e.samples[h+"_sum"]; sum < 0.03 || math.IsNaN(sum) {
		t.Errorf("sum %v, want at least the 30 ms request", sum)
	}
	if v := e.samples["celeris_open_connections"]; v < 1 {
		t.Errorf("open connections %v", v)
	}
	if v := e.samples["celeris_active_requests"]; v < 1 { // the scrape itself
		t.Errorf("active requests %v", v)
	}
	if _, ok := e.samples["celeris_active_streams"]; !ok {
		t.Error("no active streams gauge")
	}
	if v, ok := e.samples["celeris_tls_handshake_errors_total"]; !ok || v != 0 {
		t.Errorf("TLS handshake errors %v %v", v, ok)
	}
}

func TestObserveLabels(t *testing.T) {
	m := metrics.New(metrics.Config{Buckets: []float64{0.1, 1}})
	m.Observe("GET", 200, 50*time.Millisecond)
	m.Observe("BREW", 418, 2*time.Second)
	m.Observe("get", 42, time.Second) // lower-case methods are not GET; 42 is no status
	m.Observe("DELETE", 700, time.Second)
	m.Observe("PATCH", 422, time.Second)
	var buf bytes.Buffer
	m.Expose(&buf, nil)
	e := parse(t, buf.String())
	for k, v := range map[string]float64{
		`celeris_http_requests_total{method="GET",route="",status="200"}`:      1,
		`celeris_http_requests_total{method="OTHER",route="",status="418"}`:    1,
		`celeris_http_requests_total{method="OTHER",route="",status="other"}`:  1,
		`celeris_http_requests_total{method="DELETE",route="",status="other"}`: 1,
		`celeris_http_requests_total{method="PATCH",route="",status="422"}`:    1,
		`celeris_http_request_duration_seconds_bucket{le="0.1"}`:               1,
		`celeris_http_request_duration_seconds_bucket{le="1"}`:                 4,
		`celeris_http_request_duration_seconds_bucket{le="+Inf"}`:              5,
		`celeris_http_request_duration_seconds_sum`:                            5.05,
	} {
		if got, ok := e.samples[k]; !ok || math.Abs(got-v) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if _, ok := e.typ["celeris_open_connections"]; ok {
		t.Error("gauges without a server")
	}
}

func TestBadBuckets(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	metrics.New(metrics.Config{Buckets: []float64{1, 1}})
}

// TestMetricsRecordErrorHandlerStatus: the counted status is the one the client
// got, whatever the configured error handler chose: a custom handler that
// answers 422 is counted as 422, not as the 500 the error alone would give.
func TestMetricsRecordErrorHandlerStatus(t *testing.T) {
	m := metrics.New(metrics.Config{})
	_, addr := mwtest.StartConfig(t, celeris.Config{
		ErrorHandler: func(c *celeris.Context, err error) { _ = c.JSON(422, map[string]string{"error": err.Error()}) },
	}, func(s *celeris.Server) {
		s.Use(m.Middleware())
		s.GET("/metrics", m.Handler(s))
		s.GET("/invalid", func(c *celeris.Context) error { return errors.New("invalid input") })
	})
	client := mwtest.Client(t)
	if resp, _ := mwtest.Get(t, client, "http://"+addr+"/invalid", nil); resp.StatusCode != 422 {
		t.Fatalf("status %d, want 422", resp.StatusCode)
	}
	_, body := mwtest.Get(t, client, "http://"+addr+"/metrics", nil)
	e := parse(t, body)
	if got := e.samples[`celeris_http_requests_total{method="GET",route="/invalid",status="422"}`]; got != 1 {
		t.Errorf("422 counted %v times, want 1:\n%s", got, body)
	}
	if got := e.samples[`celeris_http_requests_total{method="GET",route="/invalid",status="500"}`]; got != 0 {
		t.Errorf("500 counted %v times, want 0", got)
	}
}

func TestRouteLabelBounded(t *testing.T) {
	m := metrics.New(metrics.Config{MaxRoutes: 2})
	m.ObserveRoute("GET", "/a/:id", 200, time.Millisecond)
	m.ObserveRoute("GET", "/b", 200, time.Millisecond)
	m.ObserveRoute("GET", "/c", 200, time.Millisecond) // a third pattern
	m.ObserveRoute("GET", "/d", 200, time.Millisecond)
	m.ObserveRoute("GET", "/a/:id", 200, time.Millisecond)
	m.ObserveRoute("GET", `/q"\`, 200, time.Millisecond)
	var buf bytes.Buffer
	m.Expose(&buf, nil)
	e := parse(t, buf.String())
	for k, v := range map[string]float64{
		`celeris_http_requests_total{method="GET",route="/a/:id",status="200"}`: 2,
		`celeris_http_requests_total{method="GET",route="/b",status="200"}`:     1,
		`celeris_http_requests_total{method="GET",route="other",status="200"}`:  3,
	} {
		if got := e.samples[k]; got != v {
			t.Errorf("%s = %v, want %v\n%s", k, got, v, buf.String())
		}
	}
}

func TestRuntimeMetrics(t *testing.T) {
	runtime.GC()
	var buf bytes.Buffer
	metrics.New(metrics.Config{}).Expose(&buf, nil)
	if strings.Contains(buf.String(), "celeris_go_") {
		t.Fatal("runtime series without RuntimeMetrics")
	}
	buf.Reset()
	metrics.New(metrics.Config{RuntimeMetrics: true}).Expose(&buf, nil)
	e := parse(t, buf.String())
	for name, typ := range map[string]string{
		"celeris_go_goroutines":         "gauge",
		"celeris_go_heap_objects_bytes": "gauge",
		"celeris_go_gc_cycles_total":    "counter",
		"celeris_go_gc_pause_seconds":   "histogram",
	} {
		if e.typ[name] != typ {
			t.Errorf("%s: TYPE %q", name, e.typ[name])
		}
	}
	if e.samples["celeris_go_goroutines"] < 1 || e.samples["celeris_go_heap_objects_bytes"] <= 0 ||
		e.samples["celeris_go_gc_cycles_total"] < 1 || e.samples["celeris_go_gc_pause_seconds_count"] < 1 ||
		e.samples[`celeris_go_gc_pause_seconds_bucket{le="+Inf"}`] != e.samples["celeris_go_gc_pause_seconds_count"] {
		t.Errorf("runtime samples:\n%s", buf.String())
	}
}
