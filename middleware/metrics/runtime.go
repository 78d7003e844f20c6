package metrics

import (
	"bytes"
	"math"
	"runtime/metrics"
	"strconv"
)

// Runtime series (Config.RuntimeMetrics), read from runtime/metrics at each
// scrape.
var runtimeSamples = []string{
	"/sched/goroutines:goroutines",
	"/memory/classes/heap/objects:bytes",
	"/gc/cycles/total:gc-cycles",
	"/sched/pauses/total/gc:seconds",
}

// gcPauseBounds are the le bounds of celeris_go_gc_pause_seconds: the runtime's
// own histogram has hundreds of buckets, folded into these.
var gcPauseBounds = []float64{1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 5e-2, 0.1, 1}

func exposeRuntime(buf *bytes.Buffer) {
	samples := make([]metrics.Sample, len(runtimeSamples))
	for i, name := range runtimeSamples {
		samples[i].Name = name
	}
	metrics.Read(samples)
	for _, s := range samples {
		switch s.Name {
		case "/sched/goroutines:goroutines":
			if s.Value.Kind() == metrics.KindUint64 {
				gauge(buf, "celeris_go_goroutines", "Live goroutines.", int64(s.Value.Uint64()))
			}
		case "/memory/classes/heap/objects:bytes":
			if s.Value.Kind() == metrics.KindUint64 {
				gauge(buf, "celeris_go_heap_objects_bytes", "Memory occupied by live and unswept heap objects.", int64(s.Value.Uint64()))
			}
		case "/gc/cycles/total:gc-cycles":
			if s.Value.Kind() == metrics.KindUint64 {
				buf.WriteString("# HELP celeris_go_gc_cycles_total Completed GC cycles.\n# TYPE celeris_go_gc_cycles_total counter\nceleris_go_gc_cycles_total ")
				buf.WriteString(strconv.FormatUint(s.Value.Uint64(), 10))
				buf.WriteByte('\n')
			}
		case "/sched/pauses/total/gc:seconds":
			if s.Value.Kind() == metrics.KindFloat64Histogram {
				gcPauses(buf, s.Value.Float64Histogram())
			}
		}
	}
}

// gcPauses writes the runtime's GC pause histogram folded into gcPauseBounds. A
// runtime bucket counts under the first bound at or above its upper edge; the sum
// is estimated from the bucket midpoints (the runtime keeps no exact sum).
func gcPauses(buf *bytes.Buffer, h *metrics.Float64Histogram) {
	cum := make([]uint64, len(gcPauseBounds)+1)
	var total uint64
	var sum float64
	for i, n := range h.Counts {
		if n == 0 {
			continue
		}
		lo, hi := h.Buckets[i], h.Buckets[i+1]
		total += n
		mid := hi
		switch {
		case math.IsInf(lo, -1):
			mid = hi
		case math.IsInf(hi, 1):
			mid = lo
		default:
			mid = (lo + hi) / 2
		}
		sum += mid * float64(n)
		b := len(gcPauseBounds)
		for j, bound := range gcPauseBounds {
			if hi <= bound {
				b = j
				break
			}
		}
		cum[b] += n
	}
	buf.WriteString("# HELP celeris_go_gc_pause_seconds Stop-the-world GC pauses (sum estimated from the runtime's buckets).\n# TYPE celeris_go_gc_pause_seconds histogram\n")
	var c uint64
	for j, bound := range gcPauseBounds {
		c += cum[j]
		buf.WriteString(`celeris_go_gc_pause_seconds_bucket{le="`)
		buf.WriteString(strconv.FormatFloat(bound, 'g', -1, 64))
		buf.WriteString(`"} `)
		buf.WriteString(strconv.FormatUint(c, 10))
		buf.WriteByte('\n')
	}
	buf.WriteString(`celeris_go_gc_pause_seconds_bucket{le="+Inf"} `)
	buf.WriteString(strconv.FormatUint(total, 10))
	buf.WriteString("\nceleris_go_gc_pause_seconds_sum ")
	buf.WriteString(strconv.FormatFloat(sum, 'g', -1, 64))
	buf.WriteString("\nceleris_go_gc_pause_seconds_count ")
	buf.WriteString(strconv.FormatUint(total, 10))
	buf.WriteByte('\n')
}
