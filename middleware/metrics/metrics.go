// Package metrics exposes request metrics in the Prometheus text format (version
// 0.0.4), without a client library.
//
//	m := metrics.New(metrics.Config{})
//	s.Use(m.Middleware())
//	s.GET("/metrics", m.Handler(s))
//
// Series:
//
//	celeris_http_requests_total{method,status}        counter
//	celeris_http_request_duration_seconds             histogram (_bucket{le}, _sum, _count)
//	celeris_open_connections                          gauge (from Server.Stats)
//	celeris_active_requests                           gauge
//	celeris_active_streams                            gauge (HTTP/2)
//	celeris_tls_handshake_errors_total                counter (failed TLS handshakes, not logged)
//
// Label cardinality is bounded: method is one of the nine standard methods or
// "OTHER"; status is a code with a standard reason phrase (http.StatusText), or
// else its class ("2xx" ... "5xx", "other" outside 100-599). Only series that have
// counted something are written.
//
// # Status
//
// The counted status is the one the client got. When the chain returns an error
// and nothing was written, the middleware runs the server's error handler at
// once (celeris.Context.Error), so a custom error handler's status (a 422, say)
// is counted, not the 500 a plain error would get by default; the server does not
// run the error handler again. Put the middleware inside recovery.
//
// # Cost
//
// Two clock reads and three atomic additions per request, no allocation, no lock.
// Counters are split into shards (one per P, up to 64, each on its own cache
// lines) picked at random, so that cores rarely write the same cache line; a scrape
// sums the shards.
package metrics

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/celeris-dev/celeris"
)

// Config configures the metrics. Zero values mean the defaults in brackets.
type Config struct {
	// Buckets are the histogram's upper bounds in seconds, increasing
	// [DefaultBuckets].
	Buckets []float64
	// Skip, when it returns true, records nothing for the request (e.g. the
	// scrape itself) [nil].
	Skip func(c *celeris.Context) bool
}

// DefaultBuckets are Prometheus's default latency buckets, in seconds.
var DefaultBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// methods are the method label values; the last is OTHER.
var methods = [...]string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace, "OTHER",
}

const nMethods = len(methods)

func methodIndex(m string) int {
	switch m {
	case http.MethodGet:
		return 0
	case http.MethodHead:
		return 1
	case http.MethodPost:
		return 2
	case http.MethodPut:
		return 3
	case http.MethodPatch:
		return 4
	case http.MethodDelete:
		return 5
	case http.MethodOptions:
		return 6
	case http.MethodConnect:
		return 7
	case http.MethodTrace:
		return 8
	}
	return nMethods - 1
}

// Status labels: the codes with a reason phrase, then one per class, then "other".
var (
	statusLabels []string
	statusIndex  [600]uint8 // code -> label index, for codes 100..599
	nStatus      int
)

func init() {
	for code := 100; code < 600; code++ {
		if http.StatusText(code) != "" {
			statusIndex[code] = uint8(len(statusLabels))
			statusLabels = append(statusLabels, strconv.Itoa(code))
		}
	}
	classBase := len(statusLabels)
	statusLabels = append(statusLabels, "1xx", "2xx", "3xx", "4xx", "5xx", "other")
	for code := 100; code < 600; code++ {
		if http.StatusText(code) == "" {
			statusIndex[code] = uint8(classBase + code/100 - 1)
		}
	}
	nStatus = len(statusLabels)
	if nStatus > 255 {
		panic("metrics: too many status labels")
	}
}

func statusSlot(code int) int {
	if code < 100 || code >= 600 {
		return nStatus - 1
	}
	return int(statusIndex[code])
}

// shard holds one part of every counter.
type shard struct {
	requests []atomic.Uint64 // [method*nStatus + status]
	buckets  []atomic.Uint64 // non-cumulative, len(bounds)+1 (the last is +Inf)
	sumNanos atomic.Uint64
	_        [64]byte // the next shard's header starts on another cache line
}

// Metrics collects request metrics. It is safe for concurrent use.
type Metrics struct {
	bounds  []float64
	nanos   []int64 // bounds in nanoseconds
	shards  []shard
	mask    uint32
	skip    func(c *celeris.Context) bool
	leTexts []string
}

// New returns a Metrics. It panics when Buckets are not increasing.
func New(cfg Config) *Metrics {
	bounds := cfg.Buckets
	if bounds == nil {
		bounds = DefaultBuckets
	}
	m := &Metrics{bounds: append([]float64(nil), bounds...), skip: cfg.Skip}
	for i, b := range m.bounds {
		if i > 0 && b <= m.bounds[i-1] {
			panic("metrics: Buckets must increase")
		}
		m.nanos = append(m.nanos, int64(b*1e9))
		m.leTexts = append(m.leTexts, strconv.FormatFloat(b, 'g', -1, 64))
	}
	n := 1
	for n < runtime.GOMAXPROCS(0) && n < 64 {
		n <<= 1
	}
	m.shards = make([]shard, n)
	m.mask = uint32(n - 1)
	nr, nb := nMethods*nStatus, len(m.bounds)+1
	for i := range m.shards {
		// One allocation per shard, padded by a cache line, so that no two shards
		// share one.
		counters := make([]atomic.Uint64, nr+nb+8)
		m.shards[i].requests = counters[:nr:nr]
		m.shards[i].buckets = counters[nr : nr+nb : nr+nb]
	}
	return m
}

// epoch is the origin of the middleware's clock readings. time.Since on a Time
// with a monotonic reading reads only the monotonic clock, one clock read where
// time.Now costs two (wall and monotonic); latencies need nothing else.
var epoch = time.Now()

// Middleware returns the middleware that records every request.
func (m *Metrics) Middleware() celeris.MiddlewareFunc {
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if m.skip != nil && m.skip(c) {
				return next(c)
			}
			start := time.Since(epoch)
			err := next(c)
			c.Error(err) // the error handler answers now: count the status sent
			m.Observe(c.Method(), c.ResultStatus(err), time.Since(epoch)-start)
			return err
		}
	}
}

// Observe records one request. The middleware calls it; call it directly to
// record requests served elsewhere.
func (m *Metrics) Observe(method string, status int, d time.Duration) {
	sh := &m.shards[0]
	if m.mask != 0 {
		sh = &m.shards[rand.Uint32()&m.mask]
	}
	sh.requests[methodIndex(method)*nStatus+statusSlot(status)].Add(1)
	ns := d.Nanoseconds()
	b := len(m.nanos)
	for i, bound := range m.nanos { // few buckets: a linear scan beats a binary search
		if ns <= bound {
			b = i
			break
		}
	}
	sh.buckets[b].Add(1)
	if ns > 0 {
		sh.sumNanos.Add(uint64(ns))
	}
}

// ContentType is the Content-Type of the exposition.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Handler returns a handler that writes the metrics, with s's gauges (s may be
// nil: no gauges).
func (m *Metrics) Handler(s *celeris.Server) celeris.HandlerFunc {
	return func(c *celeris.Context) error {
		var buf bytes.Buffer
		m.Expose(&buf, s)
		return c.Blob(http.StatusOK, ContentType, buf.Bytes())
	}
}

// Expose appends the exposition to buf, with s's gauges when s is not nil.
func (m *Metrics) Expose(buf *bytes.Buffer, s *celeris.Server) {
	requests := make([]uint64, nMethods*nStatus)
	buckets := make([]uint64, len(m.bounds)+1)
	var sum uint64
	for i := range m.shards {
		sh := &m.shards[i]
		for j := range requests {
			requests[j] += sh.requests[j].Load()
		}
		for j := range buckets {
			buckets[j] += sh.buckets[j].Load()
		}
		sum += sh.sumNanos.Load()
	}

	buf.WriteString("# HELP celeris_http_requests_total Requests served, by method and status.\n")
	buf.WriteString("# TYPE celeris_http_requests_total counter\n")
	type series struct {
		method, status string
		n              uint64
	}
	var rows []series
	for mi := range nMethods {
		for si := range nStatus {
			if n := requests[mi*nStatus+si]; n != 0 {
				rows = append(rows, series{methods[mi], statusLabels[si], n})
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].method != rows[j].method {
			return rows[i].method < rows[j].method
		}
		return rows[i].status < rows[j].status
	})
	for _, r := range rows {
		buf.WriteString(`celeris_http_requests_total{method="`)
		buf.WriteString(r.method)
		buf.WriteString(`",status="`)
		buf.WriteString(r.status)
		buf.WriteString(`"} `)
		buf.WriteString(strconv.FormatUint(r.n, 10))
		buf.WriteByte('\n')
	}

	buf.WriteString("# HELP celeris_http_request_duration_seconds Time from the start of the handler chain to its return.\n")
	buf.WriteString("# TYPE celeris_http_request_duration_seconds histogram\n")
	var cum uint64
	for i, le := range m.leTexts {
		cum += buckets[i]
		buf.WriteString(`celeris_http_request_duration_seconds_bucket{le="`)
		buf.WriteString(le)
		buf.WriteString(`"} `)
		buf.WriteString(strconv.FormatUint(cum, 10))
		buf.WriteByte('\n')
	}
	cum += buckets[len(buckets)-1]
	buf.WriteString(`celeris_http_request_duration_seconds_bucket{le="+Inf"} `)
	buf.WriteString(strconv.FormatUint(cum, 10))
	buf.WriteString("\nceleris_http_request_duration_seconds_sum ")
	buf.WriteString(strconv.FormatFloat(float64(sum)/1e9, 'g', -1, 64))
	buf.WriteString("\nceleris_http_request_duration_seconds_count ")
	buf.WriteString(strconv.FormatUint(cum, 10))
	buf.WriteByte('\n')

	if s == nil {
		return
	}
	st := s.Stats()
	gauge(buf, "celeris_open_connections", "Open client connections (HTTP/1.x and HTTP/2).", int64(st.OpenConnections))
	gauge(buf, "celeris_active_requests", "Requests being served (handlers running, and requests pipelined behind them).", st.ActiveRequests)
	gauge(buf, "celeris_active_streams", "Open HTTP/2 streams.", st.ActiveStreams)
	counter(buf, "celeris_tls_handshake_errors_total", "TLS handshakes that failed (not logged).", st.TLSHandshakeErrors)
}

func counter(buf *bytes.Buffer, name, help string, v int64) {
	buf.WriteString("# HELP ")
	buf.WriteString(name)
	buf.WriteByte(' ')
	buf.WriteString(help)
	buf.WriteString("\n# TYPE ")
	buf.WriteString(name)
	buf.WriteString(" counter\n")
	buf.WriteString(name)
	buf.WriteByte(' ')
	buf.WriteString(strconv.FormatInt(v, 10))
	buf.WriteByte('\n')
}

func gauge(buf *bytes.Buffer, name, help string, v int64) {
	buf.WriteString("# HELP ")
	buf.WriteString(name)
	buf.WriteByte(' ')
	buf.WriteString(help)
	buf.WriteString("\n# TYPE ")
	buf.WriteString(name)
	buf.WriteString(" gauge\n")
	buf.WriteString(name)
	buf.WriteByte(' ')
	buf.WriteString(strconv.FormatInt(v, 10))
	buf.WriteByte('\n')
}
