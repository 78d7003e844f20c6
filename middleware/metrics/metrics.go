// Package metrics exposes request metrics in the Prometheus text format (version
// 0.0.4), without a client library.
//
//	m := metrics.New(metrics.Config{})
//	s.Use(m.Middleware())
//	s.GET("/metrics", m.Handler(s))
//
// Series:
//
//	celeris_http_requests_total{method,route,status}  counter
//	celeris_http_request_duration_seconds             histogram (_bucket{le}, _sum, _count)
//	celeris_open_connections                          gauge (from Server.Stats)
//	celeris_active_requests                           gauge
//	celeris_active_streams                            gauge (HTTP/2)
//	celeris_tls_handshake_errors_total                counter (failed TLS handshakes, not logged)
//
// With Config.RuntimeMetrics, Go runtime series from runtime/metrics follow:
//
//	celeris_go_goroutines                             gauge
//	celeris_go_heap_objects_bytes                     gauge (live and unswept heap objects)
//	celeris_go_gc_cycles_total                        counter
//	celeris_go_gc_pause_seconds                       histogram (stop-the-world GC pauses)
//
// Label cardinality is bounded: method is one of the nine standard methods or
// "OTHER"; route is the pattern of the matched route ("/users/:id", never the
// path), "unmatched" for a request no route matched (404, 405), at most
// MaxRoutes patterns and "other" beyond; status is a code with a standard reason
// phrase (http.StatusText), or else its class ("2xx" ... "5xx", "other" outside
// 100-599). Only series that have counted something are written. The duration
// histogram has no labels.
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
// Two clock reads, one lookup of the series (route, method and status) and three
// atomic additions per request, no allocation, no lock once the series exists. The
// lookup is a small direct-mapped cache of recent series in front of the registry's
// map: a route pattern comes from the router, so a hit compares a string with the
// very same string and hashes nothing.
// Counters are split into shards (one per P, up to 64) picked at random, so that
// cores rarely write the same cache line; a scrape sums the shards.
package metrics

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	// MaxRoutes bounds the route label's values; requests of further patterns
	// (only Observe with arbitrary routes can make that many) count as "other"
	// [1000].
	MaxRoutes int
	// RuntimeMetrics adds Go runtime series (runtime/metrics) to the exposition
	// [false].
	RuntimeMetrics bool
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

// Series counters live in chunks of chunkSize, allocated for every shard when the
// first series of a chunk appears.
const (
	chunkSize = 256
	maxChunks = 256 // 65536 series
)

type chunk [chunkSize]atomic.Uint64

// shard holds one part of every counter.
type shard struct {
	chunks   [maxChunks]atomic.Pointer[chunk] // requests, by series index
	buckets  []atomic.Uint64                  // non-cumulative, len(bounds)+1 (the last is +Inf)
	sumNanos atomic.Uint64
	_        [64]byte // the next shard's header starts on another cache line
}

// seriesKey names one requests_total series.
type seriesKey struct {
	route          string
	method, status uint8
}

// registry maps series to counter indexes. It is copied on write: requests read
// it without a lock.
type registry struct {
	idx    map[seriesKey]int32
	keys   []seriesKey
	slots  []*seriesSlot // slots[i] names series i; made once, shared by every copy
	routes map[string]bool
}

// seriesSlot is one entry of Metrics.hot: a series and its counter index. Slots
// are immutable once published.
type seriesSlot struct {
	key seriesKey
	idx int32
}

// hotSlots is the size of Metrics.hot (a power of two).
const hotSlots = 64

// hotHash picks k's entry in Metrics.hot from what differs between routes without
// reading the whole pattern.
func hotHash(k seriesKey) uint {
	h := uint(len(k.route))*31 + uint(k.method)*7 + uint(k.status)*13
	if n := len(k.route); n > 0 {
		h += uint(k.route[n-1])*3 + uint(k.route[n/2])
	}
	return h & (hotSlots - 1)
}

// Metrics collects request metrics. It is safe for concurrent use.
type Metrics struct {
	bounds    []float64
	nanos     []int64 // bounds in nanoseconds
	shards    []shard
	mask      uint32
	skip      func(c *celeris.Context) bool
	leTexts   []string
	maxRoutes int
	runtime   bool

	series atomic.Pointer[registry]
	mu     sync.Mutex // serialises new series
	// hot caches recently counted series by hotHash; a miss, or a slot another
	// series took, falls back to the registry's map.
	hot [hotSlots]atomic.Pointer[seriesSlot]
}

// New returns a Metrics. It panics when Buckets are not increasing.
func New(cfg Config) *Metrics {
	bounds := cfg.Buckets
	if bounds == nil {
		bounds = DefaultBuckets
	}
	m := &Metrics{bounds: append([]float64(nil), bounds...), skip: cfg.Skip, maxRoutes: cfg.MaxRoutes, runtime: cfg.RuntimeMetrics}
	if m.maxRoutes <= 0 {
		m.maxRoutes = 1000
	}
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
	nb := len(m.bounds) + 1
	for i := range m.shards {
		// Padded by a cache line, so that no two shards' buckets share one.
		counters := make([]atomic.Uint64, nb+8)
		m.shards[i].buckets = counters[:nb:nb]
	}
	m.series.Store(&registry{idx: map[seriesKey]int32{}, routes: map[string]bool{}})
	return m
}

// seriesIndex returns the counter index of a series, creating it on first use.
func (m *Metrics) seriesIndex(k seriesKey) int32 {
	h := hotHash(k)
	if sl := m.hot[h].Load(); sl != nil && sl.key == k {
		return sl.idx
	}
	if r := m.series.Load(); r != nil {
		if i, ok := r.idx[k]; ok {
			m.hot[h].Store(r.slots[i])
			return i
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.series.Load()
	if !r.routes[k.route] && len(r.routes) >= m.maxRoutes {
		k.route = "other"
	}
	if i, ok := r.idx[k]; ok {
		return i
	}
	i := int32(len(r.keys))
	if int(i) >= chunkSize*maxChunks {
		return -1 // not counted; 65536 series is far past any sane label set
	}
	if i%chunkSize == 0 {
		for s := range m.shards {
			m.shards[s].chunks[i/chunkSize].Store(new(chunk))
		}
	}
	nr := &registry{idx: make(map[seriesKey]int32, len(r.idx)+1), keys: append(r.keys[:len(r.keys):len(r.keys)], k),
		slots: append(r.slots[:len(r.slots):len(r.slots)], &seriesSlot{key: k, idx: i}), routes: r.routes}
	for key, v := range r.idx {
		nr.idx[key] = v
	}
	nr.idx[k] = i
	if !r.routes[k.route] {
		nr.routes = make(map[string]bool, len(r.routes)+1)
		for route := range r.routes {
			nr.routes[route] = true
		}
		nr.routes[k.route] = true
	}
	m.series.Store(nr)
	return i
}

// epoch is the origin of the middleware's clock readings. time.Since on a Time
// with a monotonic reading reads only the monotonic clock, one clock read where
// time.Now costs two (wall and monotonic); latencies need nothing else.
var epoch = time.Now()

// Unmatched is the route label of requests no route matched (404, 405).
const Unmatched = "unmatched"

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
			route := c.RoutePattern()
			if route == "" {
				route = Unmatched
			}
			m.ObserveRoute(c.Method(), route, c.ResultStatus(err), time.Since(epoch)-start)
			return err
		}
	}
}

// Observe records one request without a route (route=""). Call it directly to
// record requests served elsewhere.
func (m *Metrics) Observe(method string, status int, d time.Duration) {
	m.ObserveRoute(method, "", status, d)
}

// ObserveRoute records one request of route (a pattern: keep the label set
// bounded). The middleware calls it.
func (m *Metrics) ObserveRoute(method, route string, status int, d time.Duration) {
	sh := &m.shards[0]
	if m.mask != 0 {
		sh = &m.shards[rand.Uint32()&m.mask]
	}
	if i := m.seriesIndex(seriesKey{route: route, method: uint8(methodIndex(method)), status: uint8(statusSlot(status))}); i >= 0 {
		sh.chunks[i/chunkSize].Load()[i%chunkSize].Add(1)
	}
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
	reg := m.series.Load()
	requests := make([]uint64, len(reg.keys))
	buckets := make([]uint64, len(m.bounds)+1)
	var sum uint64
	for i := range m.shards {
		sh := &m.shards[i]
		for j := range requests {
			requests[j] += sh.chunks[j/chunkSize].Load()[j%chunkSize].Load()
		}
		for j := range buckets {
			buckets[j] += sh.buckets[j].Load()
		}
		sum += sh.sumNanos.Load()
	}

	buf.WriteString("# HELP celeris_http_requests_total Requests served, by method, route pattern and status.\n")
	buf.WriteString("# TYPE celeris_http_requests_total counter\n")
	type series struct {
		method, route, status string
		n                     uint64
	}
	var rows []series
	for j, k := range reg.keys {
		if n := requests[j]; n != 0 {
			rows = append(rows, series{methods[k.method], k.route, statusLabels[k.status], n})
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].method != rows[j].method {
			return rows[i].method < rows[j].method
		}
		if rows[i].route != rows[j].route {
			return rows[i].route < rows[j].route
		}
		return rows[i].status < rows[j].status
	})
	for _, r := range rows {
		buf.WriteString(`celeris_http_requests_total{method="`)
		buf.WriteString(r.method)
		buf.WriteString(`",route="`)
		buf.WriteString(escapeLabel(r.route))
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

	if m.runtime {
		exposeRuntime(buf)
	}
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

// escapeLabel escapes a label value (backslash, double quote, newline).
func escapeLabel(v string) string {
	if !strings.ContainsAny(v, "\\\"\n") {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return r.Replace(v)
}
