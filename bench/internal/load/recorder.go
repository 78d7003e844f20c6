package load

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: latencies are recorded in microseconds, 1 µs to 60 s,
// three significant digits.
const (
	histMin     = 1
	histMax     = 60_000_000
	histSigFigs = 3
)

// NewHistogram returns an empty latency histogram (values in microseconds).
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(histMin, histMax, histSigFigs)
}

// Counts are what a measurement window counted.
type Counts struct {
	// OK counts 2xx responses; only these count towards RPS.
	OK int64
	// Non2xx counts complete responses with another status.
	Non2xx int64
	// Errors counts requests that got no response (I/O, protocol, reset, dial).
	Errors int64
}

func (c *Counts) add(o Counts) {
	c.OK += o.OK
	c.Non2xx += o.Non2xx
	c.Errors += o.Errors
}

// Recorder collects latencies and counts from many workers. It is sharded so
// that workers on different cores rarely share a lock; with a one-core
// loader the lock is never contended.
type Recorder struct {
	shards []shard
}

type shard struct {
	mu     sync.Mutex
	hist   *hdrhistogram.Histogram // guarded by mu
	counts Counts                  // guarded by mu
	_      [64]byte                // keep shards on separate cache lines
}

// NewRecorder returns a Recorder with n shards (at least one).
func NewRecorder(n int) *Recorder {
	r := &Recorder{shards: make([]shard, max(n, 1))}
	for i := range r.shards {
		r.shards[i].hist = NewHistogram()
	}
	return r
}

func (r *Recorder) shard(worker int) *shard { return &r.shards[worker%len(r.shards)] }

// Done records one complete response.
func (r *Recorder) Done(worker, status int, latency time.Duration) {
	s := r.shard(worker)
	us := latency.Microseconds()
	if us < histMin {
		us = histMin
	}
	s.mu.Lock()
	s.hist.RecordValue(min(us, histMax))
	if status >= 200 && status < 300 {
		s.counts.OK++
	} else {
		s.counts.Non2xx++
	}
	s.mu.Unlock()
}

// Fail records one request that got no response.
func (r *Recorder) Fail(worker int) {
	s := r.shard(worker)
	s.mu.Lock()
	s.counts.Errors++
	s.mu.Unlock()
}

// Drain moves everything recorded since the last Drain into hist (which the
// caller owns; it is not reset first) and returns the counts.
func (r *Recorder) Drain(hist *hdrhistogram.Histogram) Counts {
	var total Counts
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.Lock()
		if s.hist.TotalCount() > 0 {
			hist.Merge(s.hist)
			s.hist.Reset()
		}
		total.add(s.counts)
		s.counts = Counts{}
		s.mu.Unlock()
	}
	return total
}

// Percentiles summarises a latency histogram.
type Percentiles struct {
	P50, P90, P95, P99, Max time.Duration
}

// PercentilesOf reads p50/p90/p95/p99/max from a histogram in microseconds.
func PercentilesOf(h *hdrhistogram.Histogram) Percentiles {
	if h.TotalCount() == 0 {
		return Percentiles{}
	}
	us := func(v int64) time.Duration { return time.Duration(v) * time.Microsecond }
	return Percentiles{
		P50: us(h.ValueAtQuantile(50)),
		P90: us(h.ValueAtQuantile(90)),
		P95: us(h.ValueAtQuantile(95)),
		P99: us(h.ValueAtQuantile(99)),
		Max: us(h.Max()),
	}
}
