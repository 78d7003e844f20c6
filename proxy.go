package celeris

// Behind a proxy: the client's address and scheme from X-Forwarded-For,
// X-Forwarded-Proto and Forwarded (RFC 7239), believed only when the connection
// comes from a network in Config.TrustedProxies. A client can send these headers
// itself: trusting them from anywhere lets any client choose its address (and
// walk past IP allow lists and rate limits).

import (
	"net"
	"net/netip"
	"strings"
)

// MustParsePrefixes parses networks ("10.0.0.0/8", "fd00::/8") and single
// addresses ("127.0.0.1", a /32 or /128) for Config.TrustedProxies. It panics on
// a malformed one: it is meant for configuration.
func MustParsePrefixes(s ...string) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(s))
	for _, v := range s {
		if p, err := netip.ParsePrefix(v); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(v)
		if err != nil {
			panic("celeris: MustParsePrefixes: " + v + " is neither a network nor an address")
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out
}

// trusted reports whether a is in Config.TrustedProxies.
func (c *Context) trusted(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.Unmap()
	for _, p := range c.server.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// remoteIP is the peer's address.
func (c *Context) remoteIP() netip.Addr {
	switch a := c.req.RemoteAddr.(type) {
	case *net.TCPAddr:
		return a.AddrPort().Addr().Unmap()
	case nil:
		return netip.Addr{}
	default:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			return ap.Addr().Unmap()
		}
		ad, _ := netip.ParseAddr(a.String())
		return ad.Unmap()
	}
}

// fromTrustedProxy reports whether the connection comes from a trusted proxy.
func (c *Context) fromTrustedProxy() bool {
	return len(c.server.cfg.TrustedProxies) > 0 && c.trusted(c.remoteIP())
}

// ClientIP is the client's IP address. Without Config.TrustedProxies (the
// default), or when the connection does not come from one of them, it is the
// peer's address: forwarding headers are ignored. From a trusted proxy, the
// addresses the proxies recorded — Forwarded's for= (RFC 7239) when present,
// else X-Forwarded-For, every field line in order — are walked right to left,
// skipping trusted proxies: the first untrusted address is the client. When every
// address is trusted, the leftmost is returned; an element that is not an IP
// address (RFC 7239's "unknown" or an obfuscated name) ends the walk and is
// returned as it is. "" when the peer's address is unknown.
func (c *Context) ClientIP() string {
	peer := c.remoteIP()
	if !c.fromTrustedProxy() {
		if !peer.IsValid() {
			return ""
		}
		return peer.String()
	}
	hops := c.forwardedFor()
	if len(hops) == 0 {
		return peer.String()
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := parseHop(hops[i])
		if !ok {
			return hops[i]
		}
		if i == 0 || !c.trusted(a) {
			return a.String()
		}
	}
	return peer.String()
}

// forwardedFor lists the addresses of Forwarded's for= parameters or, without a
// Forwarded field, of X-Forwarded-For, left to right.
func (c *Context) forwardedFor() []string {
	var hops []string
	for _, f := range c.req.Header {
		if !strings.EqualFold(f.Name, "Forwarded") {
			continue
		}
		for elem := range strings.SplitSeq(f.Value, ",") {
			if v, ok := forwardedParam(elem, "for"); ok {
				hops = append(hops, v)
			}
		}
	}
	if hops != nil {
		return hops
	}
	for _, f := range c.req.Header {
		if !strings.EqualFold(f.Name, "X-Forwarded-For") {
			continue
		}
		for v := range strings.SplitSeq(f.Value, ",") {
			if v = strings.TrimSpace(v); v != "" {
				hops = append(hops, v)
			}
		}
	}
	return hops
}

// forwardedParam returns the value of parameter name in one Forwarded element
// (RFC 7239 §4), unquoted.
func forwardedParam(elem, name string) (string, bool) {
	for pair := range strings.SplitSeq(elem, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), name) {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = strings.ReplaceAll(v[1:len(v)-1], `\`, "")
		}
		return v, true
	}
	return "", false
}

// parseHop parses "192.0.2.1", "192.0.2.1:80", "[2001:db8::1]:80" or "2001:db8::1".
func parseHop(s string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), true
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil {
			return a.Unmap(), true
		}
	}
	return netip.Addr{}, false
}

// Scheme is the scheme the client used: "https" or "http". It is the
// connection's own scheme (HTTP/2's :scheme, "https" on a TLS listener: an
// engine serving TLS sets httpmsg.Request.Scheme, which this reports) unless the
// connection comes from a trusted proxy (Config.TrustedProxies): then the proto=
// of the first Forwarded element that has one, else the first value of
// X-Forwarded-Proto, when it is "http" or "https" — the scheme the edge proxy
// (which terminates TLS) recorded.
func (c *Context) Scheme() string {
	own := c.req.Scheme
	if own == "" {
		own = "http"
	}
	if !c.fromTrustedProxy() {
		return own
	}
	for _, f := range c.req.Header {
		if !strings.EqualFold(f.Name, "Forwarded") {
			continue
		}
		for elem := range strings.SplitSeq(f.Value, ",") {
			if v, ok := forwardedParam(elem, "proto"); ok {
				if s := knownScheme(v); s != "" {
					return s
				}
				return own
			}
		}
	}
	if v := c.Header("X-Forwarded-Proto"); v != "" {
		first, _, _ := strings.Cut(v, ",")
		if s := knownScheme(strings.TrimSpace(first)); s != "" {
			return s
		}
	}
	return own
}

func knownScheme(v string) string {
	switch {
	case strings.EqualFold(v, "https"):
		return "https"
	case strings.EqualFold(v, "http"):
		return "http"
	}
	return ""
}
