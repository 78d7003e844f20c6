package celerisotel

import (
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.38.0"

	"github.com/celeris-dev/celeris"
)

// methodSlots are the values of http.request.method: the methods RFC 9110
// §9 and RFC 5789 define, then "_OTHER".
var methodSlots = [...]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace, http.MethodPatch, "_OTHER"}

// otherSlot is the slot of "_OTHER".
const otherSlot = len(methodSlots) - 1

// methodSlot returns m's index in methodSlots (otherSlot for a method
// outside the set: methods are case-sensitive, RFC 9110 §9.1).
func methodSlot(m string) int {
	switch m {
	case http.MethodGet:
		return 0
	case http.MethodHead:
		return 1
	case http.MethodPost:
		return 2
	case http.MethodPut:
		return 3
	case http.MethodDelete:
		return 4
	case http.MethodConnect:
		return 5
	case http.MethodOptions:
		return 6
	case http.MethodTrace:
		return 7
	case http.MethodPatch:
		return 8
	}
	return otherSlot
}

// method returns the value of http.request.method (a constant, never the
// request's own string) and whether m is in the set; when it is not, the
// value is "_OTHER" and semconv puts the original in
// http.request.method_original.
func method(m string) (v string, known bool) {
	i := methodSlot(m)
	return methodSlots[i], i != otherSlot
}

// spanName is the HTTP server span's name (semconv "{method} {target}", the
// target being http.route): "GET /users/:id"; the method alone when no route
// matched; "HTTP" for a method outside the known set.
func spanName(m string, known bool, route string) string {
	if !known {
		m = "HTTP"
	}
	if route == "" {
		return m
	}
	return m + " " + route
}

// spanNames caches the span names of each route pattern, so that a request
// does not build its name. It holds one entry per pattern the router matched
// (registered routes only: bounded), each with a name per method slot.
type spanNames struct{ m sync.Map } // route -> *[len(methodSlots)]string

// name returns spanName for method slot and route, from the cache.
func (n *spanNames) name(slot int, route string) string {
	if v, ok := n.m.Load(route); ok {
		return v.(*[len(methodSlots)]string)[slot]
	}
	var names [len(methodSlots)]string
	for i, v := range methodSlots {
		names[i] = spanName(v, i != otherSlot, route)
	}
	v, _ := n.m.LoadOrStore(route, &names)
	return v.(*[len(methodSlots)]string)[slot]
}

// scheme returns url.scheme as a constant string.
func scheme(c *celeris.Context) string {
	if c.Scheme() == "https" {
		return "https"
	}
	return "http"
}

// protoVersion returns network.protocol.version: "1.1", "1.0", "2" or "3".
func protoVersion(proto string) string {
	switch proto {
	case "HTTP/1.1":
		return "1.1"
	case "HTTP/2.0":
		return "2"
	case "HTTP/1.0":
		return "1.0"
	case "HTTP/3.0":
		return "3"
	}
	return ""
}

// hostPort splits a Host or :authority value into server.address and
// server.port; the port is the scheme's default when the value names none.
// The address is a substring of host: the caller clones it when host is
// borrowed.
func hostPort(host, scheme string) (string, int) {
	h, p, err := net.SplitHostPort(host)
	if err != nil { // no port (or malformed): the whole value is the host
		h = host
		if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
			h = h[1 : len(h)-1]
		}
		if scheme == "https" {
			return h, 443
		}
		return h, 80
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 0 || n > 65535 {
		return h, 0
	}
	return h, n
}

// peer returns network.peer.address and network.peer.port from the
// connection's address.
func peer(a net.Addr) (string, int, bool) {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.String(), a.Port, true
	case *net.UDPAddr:
		return a.IP.String(), a.Port, true
	case nil:
		return "", 0, false
	}
	h, p, err := net.SplitHostPort(a.String())
	if err != nil {
		return "", 0, false
	}
	n, _ := strconv.Atoi(p)
	return h, n, true
}

// spanAttrs appends the attributes of a recorded HTTP server span known
// before the handler runs. Every string taken from the request is cloned:
// the span outlives the request's buffers (it is exported later).
func spanAttrs(kv []attribute.KeyValue, c *celeris.Context, m string, known bool, route, sch string) []attribute.KeyValue {
	kv = append(kv,
		semconv.HTTPRequestMethodKey.String(m),
		semconv.URLSchemeKey.String(sch),
		semconv.URLPathKey.String(c.Clone(c.Path())),
	)
	if q := c.RawQuery(); q != "" {
		kv = append(kv, semconv.URLQueryKey.String(redactQuery(q)))
	}
	if !known {
		kv = append(kv, semconv.HTTPRequestMethodOriginalKey.String(c.Clone(c.Method())))
	}
	if route != "" {
		kv = append(kv, semconv.HTTPRouteKey.String(route))
	}
	if v := protoVersion(c.Proto()); v != "" {
		kv = append(kv, semconv.NetworkProtocolVersionKey.String(v))
	}
	if h := c.Host(); h != "" {
		addr, port := hostPort(h, sch)
		kv = append(kv, semconv.ServerAddressKey.String(c.Clone(addr)))
		if port > 0 {
			kv = append(kv, semconv.ServerPortKey.Int(port))
		}
	}
	if ip := c.ClientIP(); ip != "" {
		kv = append(kv, semconv.ClientAddressKey.String(c.Clone(ip)))
	}
	if a, p, ok := peer(c.RemoteAddr()); ok {
		kv = append(kv, semconv.NetworkPeerAddressKey.String(a), semconv.NetworkPeerPortKey.Int(p))
	}
	if ua := c.Header("User-Agent"); ua != "" {
		kv = append(kv, semconv.UserAgentOriginalKey.String(c.Clone(ua)))
	}
	return kv
}

// redactedKeys are the query parameters whose values url.query carries as
// "REDACTED": the semantic conventions' url.query note lists them as ones an
// instrumentation SHOULD scrub by default (signed-URL credentials).
var redactedKeys = [...]string{"AWSAccessKeyId", "Signature", "sig", "X-Goog-Signature"}

// redactQuery returns a copy of the raw query q (the span outlives the
// request's buffers) with the values of redactedKeys replaced by "REDACTED".
func redactQuery(q string) string {
	var b strings.Builder
	b.Grow(len(q))
	for i := 0; ; i++ {
		part, rest, more := strings.Cut(q, "&")
		if i > 0 {
			b.WriteByte('&')
		}
		key, _, hasValue := strings.Cut(part, "=")
		if hasValue && slices.Contains(redactedKeys[:], key) {
			b.WriteString(key)
			b.WriteString("=REDACTED")
		} else {
			b.WriteString(part)
		}
		if !more {
			return b.String()
		}
		q = rest
	}
}

// statusString returns code as a decimal string without allocating for the
// common server errors (error.type's value).
func statusString(code int) string {
	switch code {
	case 500:
		return "500"
	case 501:
		return "501"
	case 502:
		return "502"
	case 503:
		return "503"
	case 504:
		return "504"
	}
	return strconv.Itoa(code)
}
