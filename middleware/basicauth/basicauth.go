// Package basicauth implements HTTP Basic authentication (RFC 7617).
//
// A request passes when its Authorization header holds "Basic" and the base64 of
// "user:password" for a valid pair. Any other request, including one with a missing
// or malformed header, gets 401 Unauthorized with
//
//	WWW-Authenticate: Basic realm="<Realm>", charset="UTF-8"
//
// Credentials come from Config.Users, compared in constant time (RFC 7617 leaves
// timing to the implementation; a plain comparison leaks how much of a password is
// right), or from Config.Validator. The user name of an authenticated request is
// stored in the Context under ContextKey (default "user"); User reads it.
//
// Basic credentials travel in clear text: use it only over TLS (e.g. behind a
// terminating proxy) or on trusted networks.
package basicauth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/internal/bytesconv"
)

// Config configures the middleware. Users or Validator must be set.
// Zero values mean the defaults in brackets.
type Config struct {
	// Users maps user names to passwords.
	Users map[string]string
	// Validator checks a user and password instead of Users. An error goes to the
	// server's error handler (a 500 unless it is a *celeris.HTTPError). It should
	// compare in constant time (crypto/subtle).
	Validator func(user, password string, c *celeris.Context) (bool, error)
	// Realm names the protection space in the challenge ["Restricted"].
	Realm string
	// ContextKey is the Context key of the authenticated user name ["user"];
	// "-" stores nothing.
	ContextKey string
}

// DefaultContextKey is Config.ContextKey's default.
const DefaultContextKey = "user"

// maxHeader bounds the Authorization value decoded (base64 of 3 KiB of credentials).
const maxHeader = 4096

type account struct{ user, pass [sha256.Size]byte }

// New returns the middleware. It panics when neither Users nor Validator is set.
func New(cfg Config) celeris.MiddlewareFunc {
	if cfg.Users == nil && cfg.Validator == nil {
		panic("basicauth: Config needs Users or Validator")
	}
	if cfg.Realm == "" {
		cfg.Realm = "Restricted"
	}
	if cfg.ContextKey == "" {
		cfg.ContextKey = DefaultContextKey
	}
	challenge := `Basic realm=` + quote(cfg.Realm) + `, charset="UTF-8"`
	unauthorized := celeris.NewHTTPError(http.StatusUnauthorized, "")
	validate := cfg.Validator
	if validate == nil {
		// Hash every pair once: comparing fixed-size digests takes the same time
		// whatever the lengths, and checking every account hides which user exists.
		accounts := make([]account, 0, len(cfg.Users))
		for u, p := range cfg.Users {
			accounts = append(accounts, account{user: sha256.Sum256([]byte(u)), pass: sha256.Sum256([]byte(p))})
		}
		validate = func(user, password string, _ *celeris.Context) (bool, error) {
			u, p := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(password))
			found := 0
			for i := range accounts {
				found |= subtle.ConstantTimeCompare(u[:], accounts[i].user[:]) &
					subtle.ConstantTimeCompare(p[:], accounts[i].pass[:])
			}
			return found == 1, nil
		}
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			user, password, ok := Parse(c.Header("Authorization"))
			if ok {
				valid, err := validate(user, password, c)
				if err != nil {
					return err
				}
				if valid {
					if cfg.ContextKey != "-" {
						c.Set(cfg.ContextKey, user)
					}
					return next(c)
				}
			}
			c.SetHeader("WWW-Authenticate", challenge)
			return unauthorized
		}
	}
}

// User returns the authenticated user name stored under DefaultContextKey, "" when
// there is none.
func User(c *celeris.Context) string {
	v, _ := c.Get(DefaultContextKey)
	s, _ := v.(string)
	return s
}

// Parse decodes an Authorization header value of the Basic scheme (RFC 7617 §2:
// the scheme name is case-insensitive, the user id holds no colon, the password
// may). ok is false for any other scheme or a malformed value; it never panics.
func Parse(header string) (user, password string, ok bool) {
	const prefix = "basic "
	if len(header) <= len(prefix) || len(header) > maxHeader || !strings.EqualFold(header[:len(prefix)], prefix) {
		return "", "", false
	}
	encoded := strings.TrimLeft(header[len(prefix):], " ")
	var buf [maxHeader]byte
	n, err := base64.StdEncoding.Decode(buf[:], bytesconv.S2B(encoded)) // Decode only reads src
	if err != nil {
		return "", "", false
	}
	user, password, ok = strings.Cut(string(buf[:n]), ":")
	if !ok {
		return "", "", false
	}
	return user, password, true
}

// quote makes a quoted-string (RFC 9110 §5.6.4), escaping '"' and '\'.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('"')
	return b.String()
}
