package celeris

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// Cookie returns the value of the request cookie name, without surrounding
// double quotes, or http.ErrNoCookie. It scans every Cookie header field (HTTP/2
// clients send one per cookie) without allocating, and skips malformed pairs, as
// net/http does. Valid until the handler returns.
func (c *Context) Cookie(name string) (string, error) {
	if name == "" {
		return "", http.ErrNoCookie
	}
	for i := range c.req.Header {
		f := &c.req.Header[i]
		if !httpmsg.EqualFold(f.Name, "Cookie") {
			continue
		}
		line := f.Value
		for line != "" {
			var part string
			part, line, _ = strings.Cut(line, ";")
			part = textproto.TrimString(part)
			if part == "" {
				continue
			}
			n, v, _ := strings.Cut(part, "=")
			if textproto.TrimString(n) != name {
				continue
			}
			if v, ok := cookieValue(v); ok {
				return c.own(v), nil // a copy under Config.CopyRequestValues
			}
		}
	}
	return "", http.ErrNoCookie
}

// cookieValue strips a value's double quotes and checks its bytes (RFC 6265
// §4.1.1, with net/http's leniency for spaces and commas).
func cookieValue(raw string) (string, bool) {
	if len(raw) > 1 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		raw = raw[1 : len(raw)-1]
	}
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		if b < 0x20 || b >= 0x7f || b == '"' || b == ';' || b == '\\' {
			return "", false
		}
	}
	return raw, true
}

// Cookies parses every request cookie, as http.Request.Cookies does (malformed
// pairs are skipped). The cookies are copies: they may be kept after the handler
// returns.
func (c *Context) Cookies() []*http.Cookie {
	var lines []string
	for i := range c.req.Header {
		if f := &c.req.Header[i]; httpmsg.EqualFold(f.Name, "Cookie") {
			lines = append(lines, strings.Clone(f.Value))
		}
	}
	r := http.Request{Header: http.Header{"Cookie": lines}}
	return r.Cookies()
}

// SetCookie adds a Set-Cookie response field for ck with every attribute set in
// it (Path, Domain, Expires, MaxAge, Secure, HttpOnly, SameSite, Partitioned),
// serialised by http.Cookie.String. An invalid cookie (bad name, value, path,
// domain or expiry, or Partitioned without Secure; see http.Cookie.Valid) is not
// set and the error says why. Call it before the response is written.
func (c *Context) SetCookie(ck *http.Cookie) error {
	if ck == nil {
		return errors.New("celeris: SetCookie: nil cookie")
	}
	if err := ck.Valid(); err != nil {
		return fmt.Errorf("celeris: SetCookie: %w", err)
	}
	v := ck.String()
	if v == "" {
		return fmt.Errorf("celeris: SetCookie: cookie %q cannot be serialised", ck.Name)
	}
	c.AddHeader("Set-Cookie", v)
	return nil
}
