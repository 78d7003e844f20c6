package celerisredis

import (
	"context"
	"errors"
	"time"

	"github.com/celeris-dev/celeris/middleware/session"
	goredis "github.com/redis/go-redis/v9"
)

// SessionStore keeps a user index for session.DeleteUser (sign out
// everywhere): the IDs of a user's sessions in a set under
// "<prefix>user:<user>" (no session ID holds ':'), which expires with the
// longest-lived of them. An ID whose session was deleted or expired may stay
// in the set until the set expires; deleting it again is harmless.
var _ session.UserStore = (*SessionStore)(nil)

// indexScript adds ARGV[1] to the set KEYS[1] and makes the set live at least
// ARGV[2] milliseconds. One key, so it runs in a cluster too.
const indexScript = `
redis.call('SADD', KEYS[1], ARGV[1])
local ttl = tonumber(ARGV[2])
if redis.call('PTTL', KEYS[1]) < ttl then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return 1`

func (s *SessionStore) userKey(user string) string { return s.prefix + "user:" + user }

// SaveUser implements session.UserStore in one round trip: SET (with XX for
// an existing session, so that a request in flight cannot bring back a session
// DeleteUser ended: session.ErrNotFound) and the index update. It returns by
// the request's deadline (or the store's timeout) as Save does.
func (s *SessionStore) SaveUser(ctx context.Context, user, id string, data []byte, ttl time.Duration, existing bool) error {
	_, err := do(ctx, s.dl, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.saveUser(ctx, user, id, data, ttl, existing)
	})
	return err
}

func (s *SessionStore) saveUser(ctx context.Context, user, id string, data []byte, ttl time.Duration, existing bool) error {
	ttl = max(ttl, time.Millisecond)
	pipe := s.client.Pipeline()
	var set *goredis.BoolCmd
	var plain *goredis.StatusCmd
	if existing {
		set = pipe.SetXX(ctx, s.prefix+id, data, ttl)
	} else {
		plain = pipe.Set(ctx, s.prefix+id, data, ttl)
	}
	pipe.Eval(ctx, indexScript, []string{s.userKey(user)}, id, ttl.Milliseconds())
	if _, err := pipe.Exec(ctx); err != nil {
		return err
	}
	if plain != nil {
		return plain.Err()
	}
	if !set.Val() {
		return session.ErrNotFound
	}
	return nil
}

// DeleteUser implements session.UserStore: it takes the user's session IDs
// from the index with SPOP, 128 at a time, and deletes each session, until the
// index is empty, so that a session saved meanwhile is deleted too. It
// returns by the request's deadline (or the store's timeout) as Delete does.
func (s *SessionStore) DeleteUser(ctx context.Context, user string) error {
	_, err := do(ctx, s.dl, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, s.deleteUser(ctx, user)
	})
	return err
}

func (s *SessionStore) deleteUser(ctx context.Context, user string) error {
	key := s.userKey(user)
	for {
		ids, err := s.client.SPopN(ctx, key, 128).Result()
		if err != nil && !errors.Is(err, goredis.Nil) {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		pipe := s.client.Pipeline()
		for _, id := range ids {
			pipe.Del(ctx, s.prefix+id) // one key per command: IDs hash to different cluster slots
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
	}
}
