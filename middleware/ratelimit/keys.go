package ratelimit

import "github.com/celeris-dev/celeris"

// ByClientIP is a KeyFunc: the client's IP address as c.ClientIP() finds it
// (forwarding headers believed only from Config.TrustedProxies). The default key
// is the same address in a form that does not allocate.
func ByClientIP(c *celeris.Context) string { return "ip:" + c.ClientIP() }

// ByHeader returns a KeyFunc keying on a request header, such as an API key
// header; requests without it are exempt (combine with FirstOf to limit them by
// IP). The key is "h:" + the value, so it never equals another KeyFunc's.
func ByHeader(name string) func(c *celeris.Context) string {
	return func(c *celeris.Context) string {
		if v := c.Header(name); v != "" {
			return "h:" + v
		}
		return ""
	}
}

// ByContextValue returns a KeyFunc keying on a string an earlier middleware
// stored with c.Set: the user basicauth stores under "user", the key name keyauth
// stores under "apikey", the subject the jwt module stores. Requests without it
// are exempt. The key is "v:" + the value.
func ByContextValue(key string) func(c *celeris.Context) string {
	return func(c *celeris.Context) string {
		v, _ := c.Get(key)
		if s, _ := v.(string); s != "" {
			return "v:" + s
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
