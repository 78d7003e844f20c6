package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/celeris-dev/celeris/internal/bytesconv"
)

// Limit is the shape of a token bucket: it holds at most Burst tokens and refills
// at Rate tokens per second.
type Limit struct {
	Rate  float64 // tokens added per second
	Burst int     // the bucket's size: requests a key may make at once
}

// Store keeps token buckets by key. The Limiter calls Take once per request;
// Take must take one token from key's bucket (created full) atomically with
// respect to every other Take of the same key, across every process sharing the
// store. An error lets the Limiter refuse the request (503) or, with
// Config.FailOpen, let it through.
//
// MemoryStore keeps the buckets in the process; the module
// github.com/celeris-dev/celeris/redis has a Redis store for limits shared by
// several instances.
type Store interface {
	// Take takes a token for key, which is valid only during the call.
	Take(ctx context.Context, key string, l Limit) (Result, error)
}

// MemoryStore keeps buckets in a map split into shards, each behind its own
// mutex, so that concurrent requests for different keys rarely wait for each
// other. There is no janitor goroutine: a bucket that has refilled completely is
// the same as no bucket, so each shard, at most once per sweep interval, drops its
// full buckets while it holds its lock for a request. Memory therefore follows the
// number of keys seen within about the sweep interval plus Burst/Rate seconds.
type MemoryStore struct {
	mask   uint64
	shards []shard
	epoch  time.Time
	sweep  int64 // nanoseconds between sweeps of a shard
	now    func() time.Time
}

// MemoryOptions configures a MemoryStore. Zero values mean the defaults in
// brackets.
type MemoryOptions struct {
	// Shards is the number of independently locked parts of the map, rounded up
	// to a power of two [64].
	Shards int
	// SweepInterval is how often, at most, a shard drops its full buckets
	// [1 minute].
	SweepInterval time.Duration

	now func() time.Time // for tests
}

type shard struct {
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep int64
	_         [64]byte // keep shards on separate cache lines
}

type bucket struct {
	tokens float64
	last   int64 // nanoseconds since MemoryStore.epoch of the last refill
	full   int64 // when the bucket is full again, on the same clock
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore(o MemoryOptions) *MemoryStore {
	if o.Shards <= 0 {
		o.Shards = 64
	}
	n := 1
	for n < o.Shards {
		n <<= 1
	}
	if o.SweepInterval <= 0 {
		o.SweepInterval = time.Minute
	}
	if o.now == nil {
		o.now = time.Now
	}
	m := &MemoryStore{mask: uint64(n - 1), shards: make([]shard, n), epoch: o.now(),
		sweep: o.SweepInterval.Nanoseconds(), now: o.now}
	for i := range m.shards {
		m.shards[i].buckets = make(map[string]*bucket)
	}
	return m
}

// Take implements Store; it never fails.
func (m *MemoryStore) Take(_ context.Context, key string, l Limit) (Result, error) {
	return m.take(bytesconv.S2B(key), l), nil
}

// take is Take for a key that it neither keeps nor changes (a new bucket's key
// is copied). It allocates only when it creates a bucket.
func (m *MemoryStore) take(key []byte, l Limit) Result {
	rate, burst := l.Rate/1e9, float64(l.Burst) // tokens per nanosecond
	now := m.now().Sub(m.epoch).Nanoseconds()
	sh := &m.shards[fnv64a(key)&m.mask]
	sh.mu.Lock()
	if now-sh.lastSweep > m.sweep {
		sh.sweepFull(now)
	}
	b := sh.buckets[string(key)] // no allocation: the compiler converts in place
	if b == nil {
		b = &bucket{tokens: burst, last: now}
		sh.buckets[string(key)] = b
	}
	tokens := math.Min(burst, b.tokens+float64(now-b.last)*rate)
	var r Result
	if tokens >= 1 {
		tokens--
		r.Allowed = true
	} else {
		r.RetryAfter = time.Duration(math.Ceil((1 - tokens) / rate))
	}
	r.Reset = time.Duration(math.Ceil((burst - tokens) / rate))
	if tokens < burst {
		r.Next = time.Duration(math.Ceil((math.Floor(tokens) + 1 - tokens) / rate))
	}
	b.tokens, b.last, b.full = tokens, now, now+int64(r.Reset)
	sh.mu.Unlock()
	r.Remaining = int(tokens)
	return r
}

// sweepFull drops the buckets that have refilled completely. Called with mu held.
func (sh *shard) sweepFull(now int64) {
	sh.lastSweep = now
	for k, b := range sh.buckets {
		if b.full <= now {
			delete(sh.buckets, k)
		}
	}
}

// Len returns the number of buckets held (for tests and metrics).
func (m *MemoryStore) Len() int {
	n := 0
	for i := range m.shards {
		sh := &m.shards[i]
		sh.mu.Lock()
		n += len(sh.buckets)
		sh.mu.Unlock()
	}
	return n
}

func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
