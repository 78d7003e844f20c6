package session

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Store keeps server-side sessions: the cookie then holds only a random session
// ID, and the data stays on the server, where logging out (Destroy) ends a session
// for good. Implementations must be safe for concurrent use. MemoryStore keeps
// them in the process; the module github.com/celeris-dev/celeris/redis has a Redis
// store that several server instances share.
type Store interface {
	// Load returns the data saved for id, or ErrNotFound when there is none or it
	// has expired. The returned slice is the caller's.
	Load(ctx context.Context, id string) ([]byte, error)
	// Save stores data for id, replacing what was there, to expire after ttl.
	// data is valid only during the call.
	Save(ctx context.Context, id string, data []byte, ttl time.Duration) error
	// Delete removes id's data; deleting a missing id is not an error.
	Delete(ctx context.Context, id string) error
}

// ErrNotFound is Store.Load's answer for a missing or expired session.
var ErrNotFound = errors.New("session: not found")

// MemoryStore is a Store in the process's memory, for a single instance (or
// tests): sessions are lost on restart. Expired sessions are dropped on access and,
// at most once a minute, all together while a Save holds the lock. It is a
// UserStore: it indexes sessions by user for DeleteUser.
type MemoryStore struct {
	mu        sync.Mutex
	m         map[string]memEntry
	users     map[string]map[string]struct{} // user -> session IDs
	lastSweep time.Time
	now       func() time.Time
}

type memEntry struct {
	data    []byte
	expires time.Time
	user    string
}

var _ UserStore = (*MemoryStore)(nil)

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{m: make(map[string]memEntry), users: make(map[string]map[string]struct{}), now: time.Now}
}

// Load implements Store.
func (s *MemoryStore) Load(_ context.Context, id string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[id]
	if !ok {
		return nil, ErrNotFound
	}
	if !s.now().Before(e.expires) {
		s.drop(id, e)
		return nil, ErrNotFound
	}
	return append([]byte(nil), e.data...), nil
}

// Save implements Store.
func (s *MemoryStore) Save(ctx context.Context, id string, data []byte, ttl time.Duration) error {
	return s.save(id, "", data, ttl, false)
}

// SaveUser implements UserStore.
func (s *MemoryStore) SaveUser(_ context.Context, user, id string, data []byte, ttl time.Duration, existing bool) error {
	return s.save(id, user, data, ttl, existing)
}

func (s *MemoryStore) save(id, user string, data []byte, ttl time.Duration, existing bool) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.lastSweep) > time.Minute {
		s.lastSweep = now
		for k, e := range s.m {
			if !now.Before(e.expires) {
				s.drop(k, e)
			}
		}
	}
	old, ok := s.m[id]
	if existing && (!ok || !now.Before(old.expires)) {
		return ErrNotFound
	}
	if ok && old.user != user {
		s.drop(id, old)
	}
	s.m[id] = memEntry{data: append([]byte(nil), data...), expires: now.Add(ttl), user: user}
	if user != "" {
		ids := s.users[user]
		if ids == nil {
			ids = make(map[string]struct{})
			s.users[user] = ids
		}
		ids[id] = struct{}{}
	}
	return nil
}

// drop deletes id and its index entry; s.mu is held.
func (s *MemoryStore) drop(id string, e memEntry) {
	delete(s.m, id)
	if ids := s.users[e.user]; ids != nil {
		delete(ids, id)
		if len(ids) == 0 {
			delete(s.users, e.user)
		}
	}
}

// Delete implements Store.
func (s *MemoryStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	if e, ok := s.m[id]; ok {
		s.drop(id, e)
	}
	s.mu.Unlock()
	return nil
}

// DeleteUser implements UserStore.
func (s *MemoryStore) DeleteUser(_ context.Context, user string) error {
	s.mu.Lock()
	for id := range s.users[user] {
		delete(s.m, id)
	}
	delete(s.users, user)
	s.mu.Unlock()
	return nil
}

// Len returns the number of sessions held, expired ones not yet dropped included.
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
