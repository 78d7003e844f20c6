package celerisotel

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.38.0"
)

// seriesKey names the attribute set of a request's duration and body sizes.
type seriesKey struct {
	route  string // the router's pattern ("" when none matched)
	proto  string // network.protocol.version, a constant
	status int
	slot   uint8 // the method's index in methodSlots
	https  bool
}

// maxSeries bounds the cached sets of one middleware. Routes are the
// registered patterns and statuses the codes handlers answer, so a service
// rarely comes near it; beyond it, sets are built per request.
const maxSeries = 4096

// seriesSets caches the record options of each series: building an
// attribute set costs a sort and allocations per request, a cache hit one
// map read. The options are a slice, passed on with opts...: a variadic
// argument built per call would be allocated per call.
type seriesSets struct {
	m sync.Map // seriesKey -> []metric.RecordOption
	n atomic.Int32
}

// get returns the record options of k's attributes.
func (s *seriesSets) get(k seriesKey) []metric.RecordOption {
	if v, ok := s.m.Load(k); ok {
		return v.([]metric.RecordOption)
	}
	opts := []metric.RecordOption{metric.WithAttributeSet(k.set())}
	if s.n.Load() >= maxSeries {
		return opts
	}
	if v, loaded := s.m.LoadOrStore(k, opts); loaded {
		return v.([]metric.RecordOption)
	}
	s.n.Add(1)
	return opts
}

// set builds k's attributes: http.request.method, url.scheme,
// http.response.status_code, http.route when a route matched,
// network.protocol.name and .version, and error.type for a 5xx.
func (k seriesKey) set() attribute.Set {
	var buf [7]attribute.KeyValue
	kv := append(buf[:0],
		semconv.HTTPRequestMethodKey.String(methodSlots[k.slot]),
		semconv.URLSchemeKey.String(schemes[b2i(k.https)]),
		semconv.HTTPResponseStatusCodeKey.Int(k.status))
	if k.route != "" {
		kv = append(kv, semconv.HTTPRouteKey.String(k.route))
	}
	if k.proto != "" {
		kv = append(kv, semconv.NetworkProtocolNameKey.String("http"), semconv.NetworkProtocolVersionKey.String(k.proto))
	}
	if k.status >= 500 {
		kv = append(kv, semconv.ErrorTypeKey.String(statusString(k.status)))
	}
	return attribute.NewSet(kv...)
}
