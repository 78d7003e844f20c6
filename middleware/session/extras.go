package session

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// live reports whether a decoded record is still valid at now: before its
// expiry and, with IdleTimeout, used recently enough.
func (m *manager) live(r *record, now time.Time) bool {
	if r.Expires <= now.Unix() {
		return false
	}
	if m.cfg.IdleTimeout > 0 && r.Touched > 0 && now.Sub(time.Unix(r.Touched, 0)) >= m.cfg.IdleTimeout {
		return false
	}
	return true
}

// adopt takes a loaded record's times, user and flashes, and marks the session
// to be saved for its times when Rolling or IdleTimeout asks.
func (s *Session) adopt(r *record, now time.Time) {
	m := s.m
	s.expires, s.touched = time.Unix(r.Expires, 0), time.Unix(r.Touched, 0)
	s.lifetime = time.Duration(r.Lifetime) * time.Second
	s.user, s.scopes, s.flashes = r.User, r.Scopes, r.Flashes
	window := m.cfg.IdleTimeout
	if window == 0 && m.cfg.Rolling {
		window = s.life()
	}
	if window > 0 && now.Sub(s.touched) >= max(time.Second, window/60) {
		s.touch = true
	}
}

// life is the session's lifetime: its own (SetMaxAge) or Config.MaxAge.
func (s *Session) life() time.Duration {
	if s.lifetime > 0 {
		return s.lifetime
	}
	return s.m.cfg.MaxAge
}

// store saves data in the Store, in the user's index when the session has a
// user and the Store keeps one. ErrNotFound: the session was deleted meanwhile.
func (s *Session) store(ctx context.Context, data []byte, ttl time.Duration) error {
	st := s.m.cfg.Store
	var err error
	if us, ok := st.(UserStore); ok && s.user != "" {
		err = us.SaveUser(ctx, s.user, s.id, data, ttl, !s.isNew && s.oldID == "")
		if errors.Is(err, ErrNotFound) {
			return err
		}
	} else {
		err = st.Save(ctx, s.id, data, ttl)
	}
	if err != nil {
		return fmt.Errorf("%w: save: %w", ErrStore, err)
	}
	return nil
}

// SetMaxAge gives the session a lifetime of its own, d instead of
// Config.MaxAge, from its next save on: "remember me" for 30 days, say. It is
// kept in the session; d <= 0 returns to Config.MaxAge.
func (s *Session) SetMaxAge(d time.Duration) {
	s.lifetime = max(0, d.Truncate(time.Second))
	s.dirty = true
}

// ExpiresAt returns when the session expires as last saved (zero for a new
// session not saved yet).
func (s *Session) ExpiresAt() time.Time { return s.expires }

// SetUser records who the session belongs to, with the scopes the user holds
// (session.Authenticator makes them an auth.Principal). With a Store that
// keeps a user index (UserStore: MemoryStore and the Redis store do), the
// session is indexed under user, so that DeleteUser ends all of the user's
// sessions. Call it at login, after Regenerate.
func (s *Session) SetUser(user string, scopes ...string) {
	s.user, s.scopes = user, scopes
	s.dirty = true
}

// User returns the user SetUser recorded, "" when none.
func (s *Session) User() string { return s.user }

// Scopes returns the scopes SetUser recorded. The slice is the session's.
func (s *Session) Scopes() []string { return s.scopes }

// Flash is a message kept for the next request that reads it: "saved" after a
// form's POST, shown by the page it redirects to.
type Flash struct {
	Kind    string // "info", "error"... as the application names them
	Message string
}

// AddFlash adds a message for the next page that calls Flashes.
func (s *Session) AddFlash(kind, message string) {
	s.flashes = append(s.flashes, Flash{Kind: kind, Message: message})
	s.dirty = true
}

// Flashes returns the flash messages added since the last call, in order, and
// removes them from the session (nil when there are none).
func (s *Session) Flashes() []Flash {
	f := s.flashes
	if len(f) > 0 {
		s.flashes = nil
		s.dirty = true
	}
	return f
}

// UserStore is a Store that keeps an index from users to their sessions, for
// DeleteUser (sign out everywhere).
type UserStore interface {
	Store
	// SaveUser is Save for a session of user that also records id in user's
	// index. With existing, the session is one the Store held: it is saved
	// only if id still holds a session, else SaveUser returns ErrNotFound, so
	// that a request in flight cannot bring back a session DeleteUser ended.
	SaveUser(ctx context.Context, user, id string, data []byte, ttl time.Duration, existing bool) error
	// DeleteUser deletes every session of user and its index.
	DeleteUser(ctx context.Context, user string) error
}

// ErrNoUserIndex is DeleteUser's error for a Store without a user index.
var ErrNoUserIndex = errors.New("session: the store keeps no user index (UserStore)")

// DeleteUser ends every session of user in st ("sign out everywhere"): a
// later request with one of them gets a new, empty session. st must be a
// UserStore; the cookie store cannot end sessions before they expire.
func DeleteUser(ctx context.Context, st Store, user string) error {
	us, ok := st.(UserStore)
	if !ok {
		return ErrNoUserIndex
	}
	if err := us.DeleteUser(ctx, user); err != nil {
		return fmt.Errorf("%w: delete user: %w", ErrStore, err)
	}
	return nil
}
