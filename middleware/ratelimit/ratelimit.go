// Package ratelimit limits request rates per key with token buckets.
//
// Each key (by default the client's IP address) has a bucket of Burst tokens that
// refills at Rate tokens per second. A request takes one token; with none left it is
// refused with 429 Too Many Requests (RFC 6585 §4) and a Retry-After header giving
// the seconds, rounded up, until a token is back (RFC 9110 §10.2.3).
//
// # Keys
//
// The default key is the client's IP address as c.ClientIP() finds it: the peer's
// address, or, from a proxy in Config.TrustedProxies, the client address the
// proxies recorded in Forwarded or X-Forwarded-For (a client cannot choose its
// bucket by sending those headers itself). KeyFunc picks another key: ByHeader for
// an API key, ByContextValue for the user an authentication middleware stored
// (basicauth's "user", keyauth's "apikey", jwt's subject), FirstOf to fall back
// from one to the next (a user's bucket when logged in, the IP's otherwise).
// Each KeyFunc's keys start with their kind ("ip:", "h:<header>:",
// "v:<context key>:"), so a user named "billing" and an API client named
// "billing" never share a bucket.
//
// With a Store other than the MemoryStore the default key is "ip:" and the
// address as text ("ip:192.0.2.1", IPv4-mapped addresses as IPv4), which an
// operator finds and clears with redis-cli (KEYS / DEL "ratelimit:ip:192.0.2.1").
//
// # Stores
//
// Buckets live in a Store. The default is a MemoryStore per Limiter; Config.Store
// takes another one, such as the Redis store of the module
// github.com/celeris-dev/celeris/redis, whose buckets several server instances
// share. A store that fails makes the request a 503 (a *celeris.DependencyError,
// so errors.Is(err, celeris.ErrDependency)), or, with FailOpen, lets it through;
// either way Config.Logger records the failure once per request, and the
// server's error handler does not log it again.
//
// # Headers
//
// With RateLimitHeaders, every answer carries the fields of the IETF draft "RateLimit
// header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers-11 §3 and §4), both
// Structured Field lists (RFC 9651) of one item named by PolicyName:
//
//	RateLimit-Policy: "default";q=20;w=4
//	RateLimit: "default";r=17;t=1
//
// q (quota) is the burst and w (window) the seconds a drained bucket takes to
// refill, so the policy reads "q requests per w seconds"; r is the whole tokens
// left (the available quota) and t the effective window, the seconds within which
// the client can use no more than r (§4.1.2): for a token bucket, until the next
// token is back, rounded up. A refused answer's Retry-After equals its t. With Headers, the older
// X-RateLimit-Limit (the burst), X-RateLimit-Remaining and X-RateLimit-Reset
// (seconds until full) are sent as well.
//
// Cost: with the default MemoryStore and key, one clock read and one map lookup
// under a shard lock per request, and nothing allocated except when a new client's
// bucket is created (the default key is the IP's bytes, not its text; a request
// carrying forwarding headers allocates to parse them). With another Store the
// default key is text, one allocation. A KeyFunc returning a
// fresh string allocates that string.
package ratelimit

import (
	"context"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/celeris-dev/celeris"
)

// Config configures the limiter. Zero values mean the defaults in brackets.
type Config struct {
	// Rate is the sustained rate, in requests per second, per key [10].
	Rate float64
	// Burst is the bucket size: requests a key may make at once [max(1, Rate)].
	Burst int
	// KeyFunc returns the key of a request; requests with the same key share a
	// bucket. Returning "" exempts the request. [the client IP address, as
	// c.ClientIP() finds it, without allocating]
	KeyFunc func(c *celeris.Context) string
	// Store keeps the buckets [a MemoryStore with Shards and SweepInterval].
	Store Store
	// FailOpen lets a request through when Store fails [false: 503].
	FailOpen bool
	// Logger receives one Error record per request whose Store call failed, with
	// method, path and the error [slog.Default()].
	Logger *slog.Logger
	// Headers adds X-RateLimit-Limit, -Remaining and -Reset to every answer [false].
	Headers bool
	// RateLimitHeaders adds the IETF draft's RateLimit-Policy and RateLimit fields
	// to every answer [false].
	RateLimitHeaders bool
	// PolicyName names the policy in those fields; it must be printable ASCII
	// ["default"].
	PolicyName string
	// Shards is the number of independently locked parts of the default
	// MemoryStore, rounded up to a power of two [64].
	Shards int
	// SweepInterval is how often, at most, a shard of the default MemoryStore
	// drops its full buckets [1 minute].
	SweepInterval time.Duration
	// Message is the body of the 429 answer ["Too Many Requests"].
	Message string

	now func() time.Time // for tests
}

// Limiter applies one Limit to requests. It is safe for concurrent use.
type Limiter struct {
	limit     Limit
	cfg       Config
	store     Store
	mem       *MemoryStore // when cfg.Store is nil: called directly, without allocating
	limitHdr  string
	policyHdr string // RateLimit-Policy's value
	rlPrefix  string // RateLimit's value up to r's number
	tooMany   *celeris.HTTPError
}

// Result is the outcome of taking a token.
type Result struct {
	Allowed    bool          // a token was taken: the request may proceed
	Remaining  int           // whole tokens left after this request
	RetryAfter time.Duration // until the next token, when refused
	Reset      time.Duration // until the bucket is full
	Next       time.Duration // until one more whole token is back (0 when full)
}

// New returns the middleware of a new Limiter.
func New(cfg Config) celeris.MiddlewareFunc { return NewLimiter(cfg).Middleware() }

// NewLimiter returns a Limiter, for use as middleware (Middleware) or directly
// (Allow, Take). It panics when PolicyName is not printable ASCII.
func NewLimiter(cfg Config) *Limiter {
	if cfg.Rate <= 0 {
		cfg.Rate = 10
	}
	if cfg.Burst <= 0 {
		cfg.Burst = max(1, int(math.Ceil(cfg.Rate)))
	}
	if cfg.Message == "" {
		cfg.Message = http.StatusText(http.StatusTooManyRequests)
	}
	if cfg.PolicyName == "" {
		cfg.PolicyName = "default"
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l := &Limiter{
		limit:    Limit{Rate: cfg.Rate, Burst: cfg.Burst},
		cfg:      cfg,
		store:    cfg.Store,
		limitHdr: strconv.Itoa(cfg.Burst),
		tooMany:  celeris.NewHTTPError(http.StatusTooManyRequests, cfg.Message),
	}
	if l.store == nil {
		l.mem = NewMemoryStore(MemoryOptions{Shards: cfg.Shards, SweepInterval: cfg.SweepInterval, now: cfg.now})
		l.store = l.mem
	}
	name := sfString(cfg.PolicyName)
	window := int64(math.Ceil(float64(cfg.Burst) / cfg.Rate))
	l.policyHdr = name + ";q=" + strconv.Itoa(cfg.Burst) + ";w=" + strconv.FormatInt(window, 10)
	l.rlPrefix = name + ";r="
	return l
}

// Allow takes a token from key's bucket. key is not retained. A failing Store
// counts as allowed with FailOpen, refused otherwise; Take reports the error.
func (l *Limiter) Allow(key string) Result {
	r, err := l.Take(context.Background(), key)
	if err != nil {
		r.Allowed = l.cfg.FailOpen
	}
	return r
}

// Take takes a token from key's bucket in the Limiter's Store.
func (l *Limiter) Take(ctx context.Context, key string) (Result, error) {
	return l.store.Take(ctx, key, l.limit)
}

// Len returns the number of buckets the default MemoryStore holds (for tests and
// metrics), -1 with another Store.
func (l *Limiter) Len() int {
	if l.mem == nil {
		return -1
	}
	return l.mem.Len()
}

// Middleware returns the middleware enforcing the limiter.
func (l *Limiter) Middleware() celeris.MiddlewareFunc {
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			var r Result
			var err error
			if l.cfg.KeyFunc != nil {
				key := l.cfg.KeyFunc(c)
				if key == "" {
					return next(c)
				}
				r, err = l.store.Take(c.Context(), key, l.limit)
			} else {
				var buf [16]byte
				key := clientKey(c, buf[:0])
				if l.mem != nil {
					r = l.mem.take(key, l.limit)
				} else {
					r, err = l.store.Take(c.Context(), clientKeyText(c), l.limit)
				}
			}
			if err != nil {
				l.cfg.Logger.Error("ratelimit: store failed", "method", c.Method(), "path", c.Path(),
					"fail_open", l.cfg.FailOpen, "error", err)
				if l.cfg.FailOpen {
					return next(c)
				}
				return &celeris.DependencyError{Name: "ratelimit store", Err: err, Logged: true}
			}
			if l.cfg.Headers {
				c.SetHeader("X-RateLimit-Limit", l.limitHdr)
				c.SetHeader("X-RateLimit-Remaining", strconv.Itoa(r.Remaining))
				c.SetHeader("X-RateLimit-Reset", seconds(r.Reset))
			}
			if l.cfg.RateLimitHeaders {
				l.setRateLimit(c, r)
			}
			if !r.Allowed {
				c.SetHeader("Retry-After", seconds(r.RetryAfter))
				return l.tooMany
			}
			return next(c)
		}
	}
}

// setRateLimit sets RateLimit-Policy and RateLimit, the latter built in a stack
// buffer and copied into the Context's header storage (no allocation).
func (l *Limiter) setRateLimit(c *celeris.Context, r Result) {
	c.SetHeader("RateLimit-Policy", l.policyHdr)
	var buf [64]byte
	b := append(buf[:0], l.rlPrefix...)
	b = strconv.AppendInt(b, int64(r.Remaining), 10)
	b = append(b, ";t="...)
	b = strconv.AppendInt(b, int64((r.Next+time.Second-1)/time.Second), 10)
	c.SetHeaderBytes("RateLimit", b)
}

// sfString serialises s as a Structured Field String (RFC 9651 §4.1.6): quoted,
// with '"' and '\' escaped. It panics on a byte outside printable ASCII, which
// a String cannot hold.
func sfString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch < 0x20 || ch > 0x7e {
			panic("ratelimit: PolicyName must be printable ASCII: " + strconv.Quote(s))
		}
		if ch == '"' || ch == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(ch)
	}
	b.WriteByte('"')
	return b.String()
}

// seconds formats d in whole seconds, rounded up.
func seconds(d time.Duration) string {
	return strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10)
}

// clientKey appends the bytes of the client's IP address (4 for IPv4, 16 for
// IPv6): the peer's without forwarding headers, else c.ClientIP()'s, which
// believes those headers only from a trusted proxy. An address that is not an IP
// (RFC 7239's "unknown") is appended as text.
func clientKey(c *celeris.Context, dst []byte) []byte {
	if c.Header("X-Forwarded-For") == "" && c.Header("Forwarded") == "" {
		return ipKey(c.RemoteAddr(), dst)
	}
	s := c.ClientIP()
	a, err := netip.ParseAddr(s)
	if err != nil {
		return append(dst, s...)
	}
	return appendAddr(dst, a)
}

// clientKeyText is the default key for a Store other than the MemoryStore:
// "ip:" and the address clientKey finds, as text.
func clientKeyText(c *celeris.Context) string {
	if c.Header("X-Forwarded-For") == "" && c.Header("Forwarded") == "" {
		if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
			if ip, ok := netip.AddrFromSlice(a.IP); ok {
				return "ip:" + ip.Unmap().String()
			}
		}
		return "ip:" + string(ipKey(c.RemoteAddr(), nil))
	}
	s := c.ClientIP()
	if a, err := netip.ParseAddr(s); err == nil {
		return "ip:" + a.Unmap().String()
	}
	return "ip:" + s
}

func appendAddr(dst []byte, ip netip.Addr) []byte {
	if ip = ip.Unmap(); ip.Is4() {
		b := ip.As4()
		return append(dst, b[:]...)
	}
	b := ip.As16()
	return append(dst, b[:]...)
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
		return appendAddr(dst, ip)
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
