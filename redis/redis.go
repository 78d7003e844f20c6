// Package celerisredis keeps Celeris middleware state in Redis, through
// github.com/redis/go-redis/v9, so that several server instances share it:
//
//   - SessionStore is a session.Store: each session's encoded data under
//     "<prefix><id>", written with SET ... PX so that Redis expires it.
//   - RateLimitStore is a ratelimit.Store: each key's token bucket in a hash
//     under "<prefix><key>", taken from atomically by one Lua script (EVALSHA),
//     on Redis's clock (TIME), so that instances with skewed clocks agree. A
//     bucket expires once it would have refilled, since a full bucket is the same
//     as none.
//
// Both take any go-redis client (a *redis.Client, a *redis.ClusterClient, a
// failover client): in a cluster a session or bucket lives in one slot, as each
// operation touches one key. The scripts need Redis 5 or later (scripts replicated
// by effects, so TIME may be called before a write).
//
// The module github.com/celeris-dev/celeris/redis keeps go-redis out of the core
// module's requirements.
package celerisredis

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/celeris-dev/celeris/middleware/session"
	goredis "github.com/redis/go-redis/v9"
)

// SessionStore is a session.Store in Redis. It is safe for concurrent use.
type SessionStore struct {
	client goredis.UniversalClient
	prefix string
	dl     deadline
}

var _ session.Store = (*SessionStore)(nil)

// NewSessionStore returns a store keeping sessions under prefix ["session:"]
// in client's database.
//
// Load, Save and Delete return by the request's deadline (a timeout
// middleware's), or after DefaultTimeout when the request has no earlier one,
// even when Redis stalls (ErrTimeout): configure the client with
// ContextTimeoutEnabled so that go-redis itself stops at the deadline; a client
// without it is waited for on a goroutine per call.
func NewSessionStore(client goredis.UniversalClient, prefix string) *SessionStore {
	if prefix == "" {
		prefix = "session:"
	}
	return &SessionStore{client: client, prefix: prefix, dl: newDeadline(client)}
}

// WithTimeout sets the bound of a call whose context has no earlier deadline
// [DefaultTimeout]; 0 or less leaves such a call unbounded. Call it before the
// store is used; it returns s.
func (s *SessionStore) WithTimeout(d time.Duration) *SessionStore {
	s.dl.timeout = max(d, 0)
	return s
}

// Load implements session.Store: GET, and session.ErrNotFound for a missing
// (or expired) key.
func (s *SessionStore) Load(ctx context.Context, id string) ([]byte, error) {
	key := s.prefix + id
	b, err := do(ctx, s.dl, func(ctx context.Context) ([]byte, error) { return s.client.Get(ctx, key).Bytes() })
	if errors.Is(err, goredis.Nil) {
		return nil, session.ErrNotFound
	}
	return b, err
}

// Save implements session.Store: SET with PX ttl (at least a millisecond).
func (s *SessionStore) Save(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	key := s.prefix + id
	if !s.dl.direct {
		data = slices.Clone(data) // the call may outlive Save, and the caller reuse data
	}
	_, err := do(ctx, s.dl, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.client.Set(ctx, key, data, max(ttl, time.Millisecond)).Err()
	})
	return err
}

// Delete implements session.Store: DEL.
func (s *SessionStore) Delete(ctx context.Context, id string) error {
	key := s.prefix + id
	_, err := do(ctx, s.dl, func(ctx context.Context) (struct{}, error) { return struct{}{}, s.client.Del(ctx, key).Err() })
	return err
}
