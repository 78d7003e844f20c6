// Package ratelimit limits request rates per client with token buckets.
//
// Each key (by default the client's IP address) has a bucket of Burst tokens that
// refills at Rate tokens per second. A request takes one token; with none left it is
// refused with 429 Too Many Requests (RFC 6585 §4) and a Retry-After header giving
// the seconds, rounded up, until a token is back (RFC 9110 §10.2.3). With Headers
// set, every answer also carries X-RateLimit-Limit (the burst),
// X-RateLimit-Remaining (tokens left) and X-RateLimit-Reset (seconds until the
// bucket is full again).
//
// Buckets live in a map split into shards, each behind its own mutex, so that
// concurrent requests for different keys rarely wait for each other. There is no
// janitor goroutine: a bucket that has refilled completely is the same as no bucket,
// so each shard, at most once per SweepInterval, drops its full buckets while it
// holds its lock for a request. Memory therefore follows the number of clients seen
// within about SweepInterval plus Burst/Rate seconds.
//
// Cost: one clock read and one map lookup under a shard lock per request. With the
// default key (the client IP) nothing is allocated except when a new client's
// bucket is created; a KeyFunc returning a fresh string allocates that string.
//
// Behind a reverse proxy every request comes from the proxy's address: give a
// KeyFunc that reads the client address the proxy sets (and trust only that proxy).
package ratelimit

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/bytesconv"
)

// Config configures the limiter. Zero values mean the defaults in brackets.
type Config struct {
	// Rate is the sustained rate, in requests per second, per key [10].
	Rate float64
	// Burst is the bucket size: requests a key may make at once [max(1, Rate)].
	Burst int
	// KeyFunc returns the key of a request; requests with the same key share a
	// bucket. Returning "" exempts the request. [the client IP address from
	// c.RemoteAddr(), without allocating]
	KeyFunc func(c *celeris.Context) string
	// Headers adds X-RateLimit-Limit, -Remaining and -Reset to every answer [false].
	Headers bool
	// Shards is the number of independently locked parts of the bucket map, rounded
	// up to a power of two [64].
	Shards int
	// SweepInterval is how often, at most, a shard drops its full buckets [1 minute].
	SweepInterval time.Duration
	// Message is the body of the 429 answer ["Too Many Requests"].
	Message string

	now func() time.Time // for tests
}

// Limiter holds the buckets. It is safe for concurrent use.
type Limiter struct {
	rate     float64 // tokens per nanosecond
	burst    float64
	limitHdr string
	cfg      Config
	mask     uint64
	shards   []shard
	epoch    time.Time
	tooMany  *celeris.HTTPError
}

type shard struct {
	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep int64
	_         [64]byte // keep shards on separate cache lines
}

type bucket struct {
	tokens float64
	last   int64 // nanoseconds since Limiter.epoch of the last refill
}

// New returns the middleware of a new Limiter.
func New(cfg Config) celeris.MiddlewareFunc { return NewLimiter(cfg).Middleware() }

// NewLimiter returns a Limiter, for use as middleware (Middleware) or directly (Allow).
func NewLimiter(cfg Config) *Limiter {
	if cfg.Rate <= 0 {
		cfg.Rate = 10
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(math.Ceil(cfg.Rate)))
	}
	if cfg.Shards <= 0 {
		cfg.Shards = 64
	}
	n := 1
	for n < cfg.Shards {
		n <<= 1
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = time.Minute
	}
	if cfg.Message == "" {
		cfg.Message = http.StatusText(http.StatusTooManyRequests)
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	l := &Limiter{
		rate:     cfg.Rate / 1e9,
		burst:    float64(cfg.Burst),
		limitHdr: strconv.Itoa(cfg.Burst),
		cfg:      cfg,
		mask:     uint64(n - 1),
		shards:   make([]shard, n),
		epoch:    cfg.now(),
		tooMany:  celeris.NewHTTPError(http.StatusTooManyRequests, cfg.Message),
	}
	for i := range l.shards {
		l.shards[i].buckets = make(map[string]*bucket)
	}
	return l
}

// Result is the outcome of Allow.
type Result struct {
	Allowed    bool
	Remaining  int           // whole tokens left after this request
	RetryAfter time.Duration // until the next token, when refused
	Reset      time.Duration // until the bucket is full
}

// Allow takes a token from key's bucket. key is not retained unless a new bucket
// is created (then it is copied).
func (l *Limiter) Allow(key string) Result { return l.allow(bytesconv.S2B(key)) }

// allow is Allow for a key that it neither keeps nor changes.
func (l *Limiter) allow(key []byte) Result {
	now := l.cfg.now().Sub(l.epoch).Nanoseconds()
	sh := &l.shards[fnv64a(key)&l.mask]
	sh.mu.Lock()
	if now-sh.lastSweep > l.cfg.SweepInterval.Nanoseconds() {
		sh.sweep(now, l.rate, l.burst)
	}
	b := sh.buckets[string(key)] // no allocation: the compiler converts in place
	if b == nil {
		b = &bucket{tokens: l.burst, last: now}
		sh.buckets[string(key)] = b
	}
	tokens := math.Min(l.burst, b.tokens+float64(now-b.last)*l.rate)
	b.last = now
	var r Result
	if tokens >= 1 {
		tokens--
		r.Allowed = true
	} else {
		r.RetryAfter = time.Duration(math.Ceil((1 - tokens) / l.rate))
	}
	b.tokens = tokens
	sh.mu.Unlock()
	r.Remaining = int(tokens)
	r.Reset = time.Duration(math.Ceil((l.burst - tokens) / l.rate))
	return r
}

// sweep drops the buckets that have refilled completely. Called with mu held.
func (sh *shard) sweep(now int64, rate, burst float64) {
	sh.lastSweep = now
	for k, b := range sh.buckets {
		if b.tokens+float64(now-b.last)*rate >= burst {
			delete(sh.buckets, k)
		}
	}
}

// Len returns the number of buckets held (for tests and metrics).
func (l *Limiter) Len() int {
	n := 0
	for i := range l.shards {
		sh := &l.shards[i]
		sh.mu.Lock()
		n += len(sh.buckets)
		sh.mu.Unlock()
	}
	return n
}

// Middleware returns the middleware enforcing the limiter.
func (l *Limiter) Middleware() celeris.MiddlewareFunc {
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			var r Result
			if l.cfg.KeyFunc != nil {
				key := l.cfg.KeyFunc(c)
				if key == "" {
					return next(c)
				}
				r = l.Allow(key)
			} else {
				var buf [16]byte
				r = l.allow(ipKey(c.RemoteAddr(), buf[:0]))
			}
			if l.cfg.Headers {
				c.SetHeader("X-RateLimit-Limit", l.limitHdr)
				c.SetHeader("X-RateLimit-Remaining", strconv.Itoa(r.Remaining))
				c.SetHeader("X-RateLimit-Reset", seconds(r.Reset))
			}
			if !r.Allowed {
				c.SetHeader("Retry-After", seconds(r.RetryAfter))
				return l.tooMany
			}
			return next(c)
		}
	}
}

// seconds formats d in whole seconds, rounded up.
func seconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// ipKey appends the bytes of addr's IP (IPv4-mapped addresses as IPv4), or its
// string form for other address types.
func ipKey(addr net.Addr, dst []byte) []byte {
	switch a := addr.(type) {
	case *net.TCPAddr:
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			return dst
		}
		if ip = ip.Unmap(); ip.Is4() {
			b := ip.As4()
			return append(dst, b[:]...)
		}
		b := ip.As16()
		return append(dst, b[:]...)
	case nil:
		return dst
	default:
		host, _, err := net.SplitHostPort(a.String())
		if err != nil {
			return append(dst, a.String()...)
		}
		return append(dst, host...)
	}
}

func fnv64a(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
