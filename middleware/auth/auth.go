// Package auth composes authentication: one check that accepts any of several
// kinds of credential (a session, a JWT, an API key, Basic) and yields a single
// Principal in the Context, and the checks that follow it (scopes, policies)
// whatever the kind.
//
//	api := s.Group("/api",
//		session.New(sessionCfg),
//		auth.Any(session.Authenticator(), jwt.Authenticator(jwtCfg), keyauth.Authenticator(keyCfg, scopesOf)),
//	)
//	api.POST("/orders", createOrder, auth.RequireScopes("orders:write"))
//	api.DELETE("/users/:id", deleteUser, auth.Require(isAdmin))
//
// Any tries its Authenticators in order and the first that accepts its kind of
// credential wins: it stores its Principal (From reads it) and the request goes
// on. When none accepts, a credential that was present but wrong (a bad
// signature, an unknown key) answers with its own 401 and challenge, the first
// such in order, so a client learns what was wrong with what it sent; a failure
// other than a refusal (a key set or session store that is down: 503) is
// answered the same way. When no kind found a credential at all the answer is
// 401 with one WWW-Authenticate challenge per kind tried that has one (RFC 9110
// §11.6.1 allows several: "Bearer realm=..." and "Basic realm=..."; a session
// has no challenge scheme). Every kind is tried before a refusal is answered, so
// that kinds sharing a place (API keys and JWTs both as Bearer tokens) combine.
//
// RequireScopes answers 403 unless the Principal holds every scope named, for
// any kind (with a JWT, with RFC 6750 §3.1's insufficient_scope challenge);
// Require runs a policy (a role check). Both answer 401 when no Principal is set.
//
// The adapters live beside each credential's middleware: session.Authenticator,
// keyauth.Authenticator, basicauth.Authenticator, and jwt.Authenticator in the
// jwt module. This package depends on the core only.
package auth

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/celeris-dev/celeris"
)

// Principal is who a request acts for, whatever credential it showed.
type Principal struct {
	// ID names the principal: a session's user, a token's subject, an API
	// key's name, a Basic user.
	ID string
	// Kind is the credential's kind: KindSession, KindJWT, KindAPIKey,
	// KindBasic, or an application's own.
	Kind string
	// Scopes are what the principal may do (a token's scope claim, the scopes
	// an application gives a key or a user).
	Scopes []string
	// Claims are a token's claims (nil for other kinds), for policies.
	Claims map[string]any
}

// The kinds of the adapters.
const (
	KindSession = "session"
	KindJWT     = "jwt"
	KindAPIKey  = "apikey"
	KindBasic   = "basic"
)

// HasScope reports whether p holds scope.
func (p *Principal) HasScope(scope string) bool { return slices.Contains(p.Scopes, scope) }

// ContextKey is the Context key of the request's *Principal.
const ContextKey = "auth.principal"

// From returns the request's Principal, nil when none was set.
func From(c *celeris.Context) *Principal {
	v, _ := c.Get(ContextKey)
	p, _ := v.(*Principal)
	return p
}

// Set stores p as the request's Principal (an Authenticator's middleware may
// call it itself, so that RequireScopes and Require work after it alone).
func Set(c *celeris.Context, p *Principal) { c.Set(ContextKey, p) }

// Authenticator checks one kind of credential.
type Authenticator struct {
	// Kind is the Principal's kind, for the record.
	Kind string
	// Authenticate returns the request's Principal when it carries a valid
	// credential of this kind. (nil, nil) means it carries none, and the
	// WWW-Authenticate field it may have set is this kind's challenge. A
	// non-nil error refuses the credential: a 401 *celeris.HTTPError (with its
	// WWW-Authenticate set) for a wrong one, or a failure (503 for a
	// dependency that is down); Any answers it unless another kind accepts
	// the request.
	Authenticate func(c *celeris.Context) (*Principal, error)
}

// Errors Any and the checks answer with (through the error handler).
var (
	// ErrUnauthenticated: no Authenticator found a credential (401).
	ErrUnauthenticated = &celeris.HTTPError{Code: http.StatusUnauthorized, Message: "authentication required"}
	// ErrForbidden: the Principal lacks a scope, or a policy refused it (403).
	ErrForbidden = &celeris.HTTPError{Code: http.StatusForbidden}
)

// Any returns middleware that authenticates a request with the first of
// authenticators that finds its kind of credential (see the package doc). It
// panics without authenticators.
func Any(authenticators ...Authenticator) celeris.MiddlewareFunc {
	if len(authenticators) == 0 {
		panic("auth: Any needs at least one Authenticator")
	}
	for _, a := range authenticators {
		if a.Authenticate == nil {
			panic("auth: Authenticator " + a.Kind + " has no Authenticate")
		}
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			var challenges []string
			var refusal error
			var refusalChallenge string
			for _, a := range authenticators {
				p, err := a.Authenticate(c)
				ch := c.ResponseHeader("WWW-Authenticate")
				c.DelHeader("WWW-Authenticate")
				switch {
				case err == nil && p != nil:
					Set(c, p)
					return next(c)
				case err != nil:
					if refusal == nil {
						refusal, refusalChallenge = err, ch
					}
				case ch != "":
					challenges = append(challenges, ch)
				}
			}
			if refusal != nil {
				if refusalChallenge != "" {
					c.SetHeader("WWW-Authenticate", refusalChallenge)
				}
				return refusal
			}
			for _, ch := range challenges {
				c.AddHeader("WWW-Authenticate", ch)
			}
			return ErrUnauthenticated
		}
	}
}

// Require returns middleware, to run after Any (or an adapter's middleware
// that sets the Principal), that lets a request through when policy returns
// nil. A policy's *celeris.HTTPError is answered as it is; another error is a
// 403 with the error kept as its cause. A request without Principal gets 401.
func Require(policy func(c *celeris.Context, p *Principal) error) celeris.MiddlewareFunc {
	if policy == nil {
		panic("auth: Require needs a policy")
	}
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			p := From(c)
			if p == nil {
				return ErrUnauthenticated
			}
			if err := policy(c, p); err != nil {
				var he *celeris.HTTPError
				if errors.As(err, &he) {
					return err
				}
				return &celeris.HTTPError{Code: http.StatusForbidden, Err: err}
			}
			return next(c)
		}
	}
}

// RequireScopes returns middleware, to run after Any, that lets a request
// through only when its Principal holds every scope given; else 403, with a JWT
// (RFC 6750 §3.1)
//
//	WWW-Authenticate: Bearer error="insufficient_scope", scope="<scopes>"
//
// A request without Principal gets 401. It panics when a scope is empty or
// holds a space, '"' or '\' (RFC 6750 §3: scope tokens are printable ASCII
// without them).
func RequireScopes(scopes ...string) celeris.MiddlewareFunc {
	for _, s := range scopes {
		if s == "" || strings.ContainsAny(s, " \"\\") || strings.IndexFunc(s, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
			panic("auth: RequireScopes: malformed scope " + s)
		}
	}
	challenge := `Bearer error="insufficient_scope", scope="` + strings.Join(scopes, " ") + `"`
	forbidden := celeris.NewHTTPError(http.StatusForbidden, "insufficient scope")
	return func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			p := From(c)
			if p == nil {
				return ErrUnauthenticated
			}
			for _, s := range scopes {
				if !p.HasScope(s) {
					if p.Kind == KindJWT {
						c.SetHeader("WWW-Authenticate", challenge)
					}
					return forbidden
				}
			}
			return next(c)
		}
	}
}

// Wrap makes an Authenticator of a credential's middleware (keyauth.New's,
// basicauth.New's), so that the middleware's own check, answers and challenge
// apply: present reports whether the request carries the credential; when it
// does not, mw still runs, for its challenge. id reads the principal's ID that
// mw stored in the Context; scopes (nil: none) gives that ID's scopes.
func Wrap(kind string, mw celeris.MiddlewareFunc, present func(c *celeris.Context) bool,
	id func(c *celeris.Context) string, scopes func(id string) []string) Authenticator {
	h := mw(func(*celeris.Context) error { return errPassed })
	return Authenticator{Kind: kind, Authenticate: func(c *celeris.Context) (*Principal, error) {
		has := present(c)
		err := h(c) // without the credential: sets the challenge, if any
		if !has {
			return nil, nil
		}
		if err != errPassed {
			return nil, err
		}
		p := &Principal{ID: id(c), Kind: kind}
		if scopes != nil {
			p.Scopes = scopes(p.ID)
		}
		return p, nil
	}}
}

// errPassed is what Wrap's inner handler returns: the middleware called it.
var errPassed = errors.New("auth: passed")
