// Package session keeps per-client state across requests in a cookie.
//
// Two kinds of storage:
//
//   - The cookie store (Config.Keys, no Store): the whole session travels in the
//     cookie, encrypted and authenticated with AES-GCM (crypto/aes, crypto/cipher),
//     so the client can neither read nor change it. Keys rotate: the first key
//     seals, every key opens, and a cookie opened by an older key is sealed again
//     with the first when Get loads it. Nothing is kept on the server, so a
//     session cannot be revoked before it expires (the expiry is inside the sealed
//     value, not only in the cookie's Max-Age), and the encoded session must fit
//     in a cookie (4096 bytes).
//   - A server-side Store (Config.Store): the cookie holds a random 256-bit
//     session ID and the data stays on the server: MemoryStore here, a Redis store
//     in the module github.com/celeris-dev/celeris/redis. An ID the store does not
//     know is never adopted: the request gets a fresh session with a new ID, so a
//     client cannot choose (fixate) an ID for someone else.
//
// A handler gets its session with Get, reads and changes values, and the
// middleware saves a changed session when the handler returns, before the answer
// leaves: a complete answer (String, JSON, Blob, an error's answer...) is held in
// the Context meanwhile (c.CaptureResponse, a copy of its body), so that the
// session's Set-Cookie field joins it, and when the save fails the client gets
// 503 Service Unavailable instead (ErrStore: a Store failure; a session that
// does not encode or fit a cookie is a 500), never a 200 for a change that was
// lost. A streamed answer (Stream, SSE, a file) leaves as it is written: a
// handler that streams must call Save before, or a change that needs a
// Set-Cookie field is lost and the middleware logs ErrNotSaved (a Store session
// the client's cookie already names is saved after the answer too).
//
// Session fixation (OWASP): call Regenerate when the privilege level changes,
// at login above all. It gives the session a new ID, keeping its values, and the
// old ID's data is deleted when the session is saved, so an ID an attacker planted
// or saw before the login is worth nothing after it. Destroy ends a session
// (logout).
//
// Expiry: a session lives MaxAge after its last change; with Rolling, after its
// last use, so that an active user stays signed in; SetMaxAge gives one session
// a lifetime of its own ("remember me"); IdleTimeout ends a session unused for
// that long whatever its lifetime. Flash messages (AddFlash, Flashes) last until
// the next page reads them. SetUser records the session's user: with a Store
// that indexes users (UserStore: MemoryStore, the Redis store), DeleteUser ends
// every session of a user ("sign out everywhere"), and Authenticator makes the
// user an auth.Principal for auth.Any.
//
// Values are encoded with encoding/gob: types other than the basic ones must be
// registered with gob.Register.
package session

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/gob"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/celeris-dev/celeris"
)

// Config configures the middleware. Store or Keys must be set. Zero values mean
// the defaults in brackets.
type Config struct {
	// Store keeps sessions on the server; the cookie holds only the ID [none].
	Store Store
	// Keys are the AES keys (16, 24 or 32 bytes; 32 for AES-256) of the cookie
	// store, used when Store is nil: the first seals, all open (rotation). Make
	// them with crypto/rand and keep them secret and stable across restarts.
	Keys [][]byte
	// CookieName is the cookie's name ["session"].
	CookieName string
	// MaxAge is how long a session lives after it was last changed (with
	// Rolling, used): the cookie's Max-Age, the store's expiry and, in the
	// cookie store, the sealed expiry [24 hours]. Session.SetMaxAge gives one
	// session a lifetime of its own ("remember me").
	MaxAge time.Duration
	// Rolling extends a session's expiry, by its lifetime, on each request that
	// loads it (Get), so that an active user stays signed in: the session is
	// saved again (a Store write and a Set-Cookie field) at most once per
	// sixtieth of its lifetime, and never more than once a second [false: a
	// session lives MaxAge after its last change].
	Rolling bool
	// IdleTimeout ends a session that no request loaded for this long, however
	// long its lifetime (OWASP's idle timeout) [none]. The time of use is
	// recorded in the session, saved at most once per sixtieth of IdleTimeout
	// (once a second at least), so a session ends up to that much earlier than
	// IdleTimeout after its last use.
	IdleTimeout time.Duration
	// Path is the cookie's Path ["/"].
	Path string
	// Domain is the cookie's Domain [none: the request's host only].
	Domain string
	// SameSite is the cookie's SameSite [http.SameSiteLaxMode].
	SameSite http.SameSite
	// Secure sets the cookie's Secure attribute on every answer [only on HTTPS
	// answers: c.Scheme() == "https"]. The cookie is always HttpOnly.
	Secure bool
	// Logger receives one Error record per request whose changed session could
	// not be saved because the handler streamed its answer first, and one Warn
	// record per failed save of a session's time of use alone (Rolling,
	// IdleTimeout), which does not fail the request [slog.Default()].
	Logger *slog.Logger
	// Skip lets a request through without a session when it returns true
	// [none].
	Skip func(c *celeris.Context) bool

	now func() time.Time // for tests
}

// ContextKey is the Context key of the request's *Session.
const ContextKey = "session"

// Errors callers may branch on.
var (
	// ErrNotSaved: the handler changed the session and streamed its answer
	// without calling Save first, so the change was lost (logged by the
	// middleware).
	ErrNotSaved = errors.New("session: changed after the answer was written; call Save before writing")
	// ErrWritten: Save was called after a streamed answer's header left.
	ErrWritten = errors.New("session: Save after the answer was written")
	// ErrTooLarge: the cookie store's encoded session exceeds 4096 bytes.
	ErrTooLarge = errors.New("session: the session does not fit in a cookie (4096 bytes)")
	// ErrNoMiddleware: Get on a request the middleware did not see.
	ErrNoMiddleware = errors.New("session: the session middleware is not installed on this route")
	// ErrStore wraps every failure of the Store (Load, Save, Delete): the
	// middleware answers 503 Service Unavailable for it, as for any dependency
	// that is down, and Get's error is a *celeris.DependencyError (503,
	// errors.Is celeris.ErrDependency) wrapping it.
	ErrStore = errors.New("session: store failed")
)

// maxCookie bounds a cookie's name and value together (RFC 6265 §6.1 asks user
// agents for at least 4096 bytes per cookie).
const maxCookie = 4096

type manager struct {
	cfg    Config
	sealer *sealer // cookie store; nil with a Store
}

// record is what a session encodes to.
type record struct {
	ID       string
	Expires  int64 // Unix seconds
	Values   map[string]any
	Touched  int64  // Unix seconds of the last recorded use (IdleTimeout, Rolling)
	Lifetime int64  // seconds; 0: Config.MaxAge
	User     string // SetUser
	Scopes   []string
	Flashes  []Flash
}

// New returns the middleware. It panics when neither Store nor Keys is set or a
// key has the wrong size.
func New(cfg Config) celeris.MiddlewareFunc {
	m := &manager{cfg: cfg}
	if cfg.Store == nil {
		s, err := newSealer(cfg.Keys)
		if err != nil {
			panic(err.Error())
		}
		m.sealer = s
	}
	if m.cfg.CookieName == "" {
		m.cfg.CookieName = "session"
	}
	if m.cfg.MaxAge <= 0 {
		m.cfg.MaxAge = 24 * time.Hour
	}
	if m.cfg.Path == "" {
		m.cfg.Path = "/"
	}
	if m.cfg.SameSite == 0 {
		m.cfg.SameSite = http.SameSiteLaxMode
	}
	if m.cfg.now == nil {
		m.cfg.now = time.Now
	}
	if m.cfg.Logger == nil {
		m.cfg.Logger = slog.Default()
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			if cfg.Skip != nil && cfg.Skip(c) {
				return next(c)
			}
			s := &Session{m: m, c: c}
			c.Set(ContextKey, s)
			// A complete answer (String, JSON, Blob...) is held in the Context
			// until the session is saved, so that the Set-Cookie field joins
			// it and a failed save answers 503 instead of it.
			s.holding = true
			status, body, held, err := c.CaptureResponse(next)
			s.holding = false
			return m.finish(c, s, status, body, held, err)
		}
	}
}

// finish saves a changed session and sends the answer the handler wrote (held:
// captured with status and body), or answers 503 when the save fails.
func (m *manager) finish(c *celeris.Context, s *Session, status int, body []byte, held bool, err error) error {
	var serr error
	if s.dirty {
		serr = s.Save()
	} else if s.touch {
		// Only the time of use changes (Rolling, IdleTimeout): a failure loses
		// no change of the client's, so the answer goes out and it is logged.
		if terr := s.Save(); terr != nil {
			m.cfg.Logger.Warn("session: time of use not saved", "method", c.Method(), "path", c.Path(), "error", terr)
		}
	}
	if held {
		if serr != nil {
			// The handler's answer is dropped: its client would believe a
			// change that was lost.
			for _, h := range handlerFields {
				c.DelHeader(h)
			}
			return storeFailure(serr)
		}
		if werr := c.Blob(status, "", body); werr != nil {
			return werr
		}
		return err
	}
	if c.Written() {
		// A streamed answer left before the session could be saved. The
		// error handler drops errors returned after the answer, so a lost
		// change is logged here, once.
		if errors.Is(serr, ErrWritten) {
			serr = ErrNotSaved
		}
		if serr != nil {
			m.cfg.Logger.Error("session: not saved", "method", c.Method(), "path", c.Path(), "error", serr)
		}
		return err
	}
	if serr != nil && err == nil {
		return storeFailure(serr)
	}
	return err
}

// handlerFields are the handler's response fields that describe the answer it
// wrote, dropped when a failed save replaces that answer with 503.
var handlerFields = []string{"Content-Type", "Content-Length", "Content-Disposition", "Content-Encoding",
	"ETag", "Last-Modified", "Location"}

// storeFailure is the error of a failed save: a 503 when the Store failed (a
// dependency is down: the client may retry), else err itself (a 500: the
// session does not encode or fit in a cookie, a programmer's error).
func storeFailure(err error) error {
	if errors.Is(err, ErrStore) {
		return &celeris.DependencyError{Name: "session store", Err: err}
	}
	return err
}

// Session is one client's session. It belongs to its request: use it only in
// the handler (and middleware) of that request, from one goroutine.
type Session struct {
	m         *manager
	c         *celeris.Context
	loaded    bool
	id        string
	oldID     string // to delete from the Store on Save (Regenerate)
	values    map[string]any
	isNew     bool
	dirty     bool
	destroyed bool
	holding   bool // the middleware holds a complete answer until it saves
	touch     bool // to save for its times only (Rolling, IdleTimeout)
	expires   time.Time
	touched   time.Time
	lifetime  time.Duration // SetMaxAge; 0: Config.MaxAge
	user      string
	scopes    []string
	flashes   []Flash
}

// Get returns the request's session, loading it on first use: from the cookie
// store's cookie, or from the Store by the cookie's ID. A missing, expired,
// forged or unknown session is not an error: the request gets a new, empty one.
// The error is the Store's (or ErrNoMiddleware).
func Get(c *celeris.Context) (*Session, error) {
	v, _ := c.Get(ContextKey)
	s, _ := v.(*Session)
	if s == nil {
		return nil, ErrNoMiddleware
	}
	if !s.loaded {
		if err := s.load(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Session) load() error {
	m := s.m
	raw, err := s.c.Cookie(m.cfg.CookieName)
	if err == nil && raw != "" {
		var data []byte
		var rotated bool
		if m.sealer != nil {
			data, rotated, err = m.sealer.open(m.cfg.CookieName, raw)
		} else if validID(raw) {
			data, err = m.cfg.Store.Load(s.c.Context(), raw)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return &celeris.DependencyError{Name: "session store", Err: fmt.Errorf("%w: load: %w", ErrStore, err)}
			}
		} else {
			err = errOpen
		}
		if err == nil {
			var r record
			now := m.cfg.now()
			if gob.NewDecoder(bytes.NewReader(data)).Decode(&r) == nil && m.live(&r, now) {
				if m.sealer == nil {
					r.ID = strings.Clone(raw) // raw is the request's, valid until the handler returns
				}
				s.id, s.values, s.loaded = r.ID, r.Values, true
				if s.values == nil {
					s.values = map[string]any{}
				}
				s.adopt(&r, now)
				if rotated && !s.c.Written() {
					// Sealed again with the first key now, while the answer's
					// header is open; a later Save of this request adds a newer
					// cookie of the same name, path and domain, which replaces
					// this one in the client (RFC 6265 §5.3, step 11).
					return s.Save()
				}
				return nil
			}
		}
	}
	s.id, s.values, s.isNew, s.dirty, s.loaded = newID(), map[string]any{}, true, false, true
	return nil
}

// ID returns the session's ID: a random 256-bit value in base64url, new for a
// new session and after Regenerate. With a Store it is the cookie's value; in the
// cookie store it is sealed inside the cookie. It may be kept.
func (s *Session) ID() string { return s.id }

// IsNew reports whether the session was created by this request.
func (s *Session) IsNew() bool { return s.isNew }

// Get returns the value stored under key, nil when there is none.
func (s *Session) Get(key string) any { return s.values[key] }

// GetString returns the string stored under key, "" when there is none or it
// is not a string.
func (s *Session) GetString(key string) string {
	v, _ := s.values[key].(string)
	return v
}

// Set stores v under key; the session is saved when the handler returns.
func (s *Session) Set(key string, v any) {
	s.values[key] = v
	s.dirty = true
}

// Delete removes key's value.
func (s *Session) Delete(key string) {
	if _, ok := s.values[key]; ok {
		delete(s.values, key)
		s.dirty = true
	}
}

// Keys returns the keys of the values held, sorted.
func (s *Session) Keys() []string { return slices.Sorted(maps.Keys(s.values)) }

// Regenerate gives the session a new ID, keeping its values; with a Store, the
// old ID's data is deleted on Save. Call it at login (session fixation).
func (s *Session) Regenerate() {
	if !s.isNew && s.oldID == "" {
		s.oldID = s.id
	}
	s.id = newID()
	s.dirty = true
}

// Destroy ends the session: its values are dropped, its Store data deleted and
// the cookie expired on Save. A later Set starts a new session with a new ID.
func (s *Session) Destroy() {
	if !s.isNew && s.oldID == "" {
		s.oldID = s.id
	}
	clear(s.values)
	s.user, s.scopes, s.flashes, s.lifetime = "", nil, nil, 0
	s.id = newID()
	s.isNew = true
	s.destroyed = true
	s.dirty = true
}

// Save writes the session: the sealed cookie, or the Store's data and the ID
// cookie. The middleware calls it when the handler returns with the session
// changed, before the handler's answer leaves; a handler calls it to see a
// failure itself. Called by the handler after its answer was written, it leaves
// the save to the middleware and returns nil. A Set-Cookie field must go out
// with the answer's header: after a streamed answer's header left, Save returns
// ErrWritten, except with a Store for a session the client's cookie already
// names (not new, not regenerated, not destroyed), whose data is saved whenever.
// Each Save that sets the cookie adds a Set-Cookie field; the client keeps the
// last one (RFC 6265 §5.3). A Store failure wraps ErrStore.
func (s *Session) Save() error {
	m := s.m
	ctx := s.c.Context()
	if s.c.Written() && s.holding {
		// The answer is held (or streamed, and then the middleware logs the
		// loss): the middleware saves before it leaves.
		return nil
	}
	if s.c.Written() {
		// With a Store, a session whose cookie already names its ID needs no
		// Set-Cookie: its data can still be saved.
		if m.cfg.Store == nil || s.isNew || s.oldID != "" || s.destroyed {
			return ErrWritten
		}
		data, ttl, err := s.encode()
		if err != nil {
			return err
		}
		if err := s.store(ctx, data, ttl); err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil // ended elsewhere meanwhile (DeleteUser)
			}
			return err
		}
		s.dirty, s.touch = false, false
		return nil
	}
	if s.oldID != "" && m.cfg.Store != nil {
		if err := m.cfg.Store.Delete(ctx, s.oldID); err != nil {
			return fmt.Errorf("%w: delete: %w", ErrStore, err)
		}
	}
	s.oldID = ""
	ck := &http.Cookie{Name: m.cfg.CookieName, Path: m.cfg.Path, Domain: m.cfg.Domain, HttpOnly: true,
		SameSite: m.cfg.SameSite, Secure: m.cfg.Secure || s.c.TLS() != nil || s.c.Scheme() == "https"}
	if s.destroyed && len(s.values) == 0 {
		ck.MaxAge = -1 // Max-Age=0: the client deletes it
		s.dirty = false
		return s.c.SetCookie(ck)
	}
	data, ttl, err := s.encode()
	if err != nil {
		return err
	}
	if m.sealer != nil {
		ck.Value = m.sealer.seal(m.cfg.CookieName, data)
		if len(ck.Name)+len(ck.Value) > maxCookie {
			return ErrTooLarge
		}
	} else {
		if err := s.store(ctx, data, ttl); err != nil {
			if !errors.Is(err, ErrNotFound) {
				return err
			}
			// Ended elsewhere meanwhile (DeleteUser): the change is dropped
			// rather than bringing the session back, and the client forgets it.
			s.dirty, s.touch = false, false
			ck.MaxAge = -1
			return s.c.SetCookie(ck)
		}
		ck.Value = s.id
	}
	ck.MaxAge = max(1, int((s.expires.Sub(m.cfg.now())+time.Second-1)/time.Second))
	s.dirty, s.touch, s.destroyed = false, false, false
	return s.c.SetCookie(ck)
}

// encode returns the session's record and the time the Store keeps it: a
// change (or Rolling) moves the expiry to its lifetime from now, a save for the
// time of use alone keeps it.
func (s *Session) encode() ([]byte, time.Duration, error) {
	m := s.m
	now := m.cfg.now()
	if s.dirty || m.cfg.Rolling || s.expires.IsZero() {
		s.expires = now.Add(s.life())
	}
	s.touched = now
	r := record{ID: s.id, Expires: s.expires.Unix(), Values: s.values, Touched: now.Unix(),
		Lifetime: int64(s.lifetime / time.Second), User: s.user, Scopes: s.scopes, Flashes: s.flashes}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(r); err != nil {
		return nil, 0, fmt.Errorf("session: encode: %w (register custom types with gob.Register)", err)
	}
	ttl := s.expires.Sub(now)
	if m.cfg.IdleTimeout > 0 {
		ttl = min(ttl, m.cfg.IdleTimeout)
	}
	return buf.Bytes(), max(ttl, time.Second), nil
}

const idBytes = 32

func newID() string {
	var b [idBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// validID reports whether v has the form of an ID newID makes.
func validID(v string) bool {
	if len(v) != base64.RawURLEncoding.EncodedLen(idBytes) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(v)
	return err == nil
}
