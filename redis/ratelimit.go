package celerisredis

import (
	"context"
	"errors"
	"time"

	"github.com/celeris-dev/celeris/middleware/ratelimit"
	goredis "github.com/redis/go-redis/v9"
)

// RateLimitStore is a ratelimit.Store in Redis. It is safe for concurrent use.
type RateLimitStore struct {
	client goredis.UniversalClient
	prefix string
	dl     deadline
}

var _ ratelimit.Store = (*RateLimitStore)(nil)

// NewRateLimitStore returns a store keeping buckets under prefix ["ratelimit:"]
// in client's database.
//
// Each Take returns by the request's deadline (a timeout middleware's), or after
// DefaultTimeout when the request has no earlier one, even when Redis stalls:
// configure the client with ContextTimeoutEnabled so that go-redis itself stops
// at the deadline; a client without it is waited for on a goroutine per call.
func NewRateLimitStore(client goredis.UniversalClient, prefix string) *RateLimitStore {
	if prefix == "" {
		prefix = "ratelimit:"
	}
	return &RateLimitStore{client: client, prefix: prefix, dl: newDeadline(client)}
}

// WithTimeout sets the bound of a Take whose context has no earlier deadline
// [DefaultTimeout]; 0 or less leaves such a Take unbounded (go-redis's
// ReadTimeout and retries then decide). Call it before the store is used; it
// returns s.
func (s *RateLimitStore) WithTimeout(d time.Duration) *RateLimitStore {
	s.dl.timeout = max(d, 0)
	return s
}

// takeScript takes a token from the bucket KEYS[1] of rate ARGV[1] tokens per
// second and size ARGV[2], on Redis's clock, in microseconds. It returns
// {allowed (0/1), whole tokens left, µs until a token when refused, µs until
// full, µs until one more whole token}.
// Tokens are stored as a string to keep their fraction (Lua numbers returned to
// Redis are truncated to integers).
var takeScript = goredis.NewScript(`
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1])
local ts = tonumber(b[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000000)
local allowed = 0
local retry = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  retry = math.ceil((1 - tokens) * 1000000 / rate)
end
local reset = math.ceil((burst - tokens) * 1000000 / rate)
local nxt = 0
if tokens < burst then
  nxt = math.ceil((math.floor(tokens) + 1 - tokens) * 1000000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ts', string.format('%d', now))
redis.call('PEXPIRE', KEYS[1], math.ceil(reset / 1000) + 1)
return {allowed, math.floor(tokens), retry, reset, nxt}
`)

// Take implements ratelimit.Store with one EVALSHA (EVAL when Redis does not
// have the script yet), bounded as NewRateLimitStore says (ErrTimeout).
func (s *RateLimitStore) Take(ctx context.Context, key string, l ratelimit.Limit) (ratelimit.Result, error) {
	keys := []string{s.prefix + key}
	vals, err := do(ctx, s.dl, func(ctx context.Context) ([]int64, error) {
		return takeScript.Run(ctx, s.client, keys, l.Rate, l.Burst).Int64Slice()
	})
	if err != nil {
		return ratelimit.Result{}, err
	}
	if len(vals) != 5 {
		return ratelimit.Result{}, errors.New("celerisredis: unexpected script reply")
	}
	return ratelimit.Result{
		Allowed:    vals[0] == 1,
		Remaining:  int(vals[1]),
		RetryAfter: time.Duration(vals[2]) * time.Microsecond,
		Reset:      time.Duration(vals[3]) * time.Microsecond,
		Next:       time.Duration(vals[4]) * time.Microsecond,
	}, nil
}
