package ratelimit

import (
	"strings"

	"github.com/celeris-dev/celeris"
)

// ByClientIP is a KeyFunc: the client's IP address as c.ClientIP() finds it
// (forwarding headers believed only from Config.TrustedProxies). The default key
// is the same address in a form that does not allocate.
func ByClientIP(c *celeris.Context) string { return "ip:" + c.ClientIP() }

// ByHeader returns a KeyFunc keying on a request header, such as an API key
// header; requests without it are exempt (combine with FirstOf to limit them by
// IP). The key is "h:<name in lower case>:<value>", so it never equals another
// KeyFunc's, nor ByHeader's for another header.
func ByHeader(name string) func(c *celeris.Context) string {
	prefix := "h:" + strings.ToLower(name) + ":"
	return func(c *celeris.Context) string {
		if v := c.Header(name); v != "" {
			return prefix + v
		}
		return ""
	}
}

// ByContextValue returns a KeyFunc keying on a string an earlier middleware
// stored with c.Set: the user basicauth stores under "user", the key name keyauth
// stores under "apikey", the subject the jwt module stores. Requests without it
// are exempt. The key is "v:<key>:<value>": it carries its kind, so a JWT subject
// "billing" and an API client named "billing" have buckets of their own. It
// panics when key contains ':', which would make two kinds' keys ambiguous.
func ByContextValue(key string) func(c *celeris.Context) string {
	if strings.Contains(key, ":") {
		panic("ratelimit: ByContextValue key must not contain ':': " + key)
	}
	prefix := "v:" + key + ":"
	return func(c *celeris.Context) string {
		v, _ := c.Get(key)
		if s, _ := v.(string); s != "" {
			return prefix + s
		}
		return ""
	}
}

// FirstOf returns a KeyFunc returning the first non-empty key of fns, "" (exempt)
// when all are empty.
func FirstOf(fns ...func(c *celeris.Context) string) func(c *celeris.Context) string {
	return func(c *celeris.Context) string {
		for _, f := range fns {
			if k := f(c); k != "" {
				return k
			}
		}
		return ""
	}
}
