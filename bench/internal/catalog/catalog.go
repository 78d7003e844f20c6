// Package catalog names what the benchmark suite can measure: the frameworks
// (peer servers), the scenarios (one route each) and the protocols, with the
// answer every peer must give so that all of them do the same work.
//
// HTTP scenarios run over h1, h2c, h1tls, h2tls and h3; WebSocket scenarios (an echo of one
// message size on GET /ws/echo, or idle connections) run over ws only. A
// framework takes part in a protocol's tables when it is Relevant to it: the
// HTTP frameworks in h1 and h2c, the WebSocket ones in ws (celeris in both),
// celeris and quicgo in h3.
//
// It is the single list the CLI validates against, the suite iterates over
// and the smoke test checks; it has no I/O.
package catalog

import (
	"fmt"
	"strconv"
)

// Protocol names.
const (
	H1  = "h1"
	H2C = "h2c"
	// H1TLS is HTTP/1.1 over TLS (ALPN http/1.1), H2TLS HTTP/2 over TLS
	// (ALPN h2); the servers use a self-signed certificate the loader does
	// not verify.
	H1TLS = "h1tls"
	H2TLS = "h2tls"
	// H3 is HTTP/3 (RFC 9114) over QUIC on UDP, with a self-signed
	// certificate the loader does not verify.
	H3 = "h3"
	// WS is WebSocket (RFC 6455) over HTTP/1.1: GET /ws/echo, binary messages.
	WS = "ws"
)

// Protocols lists every protocol in report order.
var Protocols = []string{H1, H2C, H1TLS, H2TLS, H3, WS}

// IsTLS reports whether proto runs over TLS.
func IsTLS(proto string) bool { return proto == H1TLS || proto == H2TLS }

// IsH2 reports whether proto is HTTP/2 (h2c or h2 over TLS).
func IsH2(proto string) bool { return proto == H2C || proto == H2TLS }

// WSPath is the echo route every WebSocket peer serves.
const WSPath = "/ws/echo"

// Framework is one peer server.
type Framework struct {
	Name string
	// H2C reports whether the peer speaks HTTP/2 cleartext with prior knowledge.
	H2C bool
	// Demo marks the repository's own demo server (cmd/demo, a module of its
	// own); every other framework is served by bench/cmd/peer.
	Demo bool
	// Inline passes -inline to the demo (handlers run on the event loop).
	Inline bool
	// Workers passes -workers to the demo (every other handler on a worker,
	// Config.HandlersOnWorkers, instead of in place first).
	Workers bool
	// Engine is the demo's -engine for its plaintext listener ("": the
	// default, gnet on Linux). A framework with an Engine is measured over
	// plaintext only: the demo's TLS listener is the std engine whatever
	// -engine says, so its TLS rows would repeat celeris's.
	Engine string
	// WS reports whether the peer serves the WebSocket echo on WSPath.
	WS bool
	// WSOnly marks a WebSocket peer: it serves GET /bench (for the readiness
	// probe) and WSPath, and is measured over ws only.
	WSOnly bool
	// H3 reports whether the peer speaks HTTP/3; H3Only marks a peer
	// measured over h3 only.
	H3, H3Only bool
}

// Frameworks lists every framework in report order; celeris comes first
// because the reports' ratios are relative to it.
var Frameworks = []Framework{
	{Name: "celeris", H2C: true, Demo: true, WS: true, H3: true},
	{Name: "celeris-inline", H2C: true, Demo: true, Inline: true},
	// The demo with every handler that is not inline on a worker.
	{Name: "celeris-workers", H2C: true, Demo: true, Workers: true},
	// The demo on the std-library engine (internal/stdengine) for plaintext.
	{Name: "celeris-std", H2C: true, Demo: true, Engine: "std"},
	// The same with -inline: the benchmark routes run on the connection's
	// goroutine, as fasthttp's handlers do (no worker hand-off; a client's
	// disconnect is seen only after the handler returns).
	{Name: "celeris-std-inline", H2C: true, Demo: true, Inline: true, Engine: "std"},
	{Name: "nethttp", H2C: true},
	{Name: "gin", H2C: true},
	{Name: "echo", H2C: true},
	{Name: "chi", H2C: true},
	{Name: "fasthttp"},
	{Name: "fiber"},
	// quic-go's http3.Server serving the routes through net/http (h3 only).
	{Name: "quicgo", H3: true, H3Only: true},
	// WebSocket peers (bench/cmd/peer). celeris above is the demo's /ws/echo
	// (callbacks: no goroutine per connection); celeris-blocking is the same
	// echo with websocket.Handler (a goroutine per connection, ReadMessage).
	{Name: "celeris-blocking", WS: true, WSOnly: true},
	{Name: "gorilla", WS: true, WSOnly: true},
	{Name: "coder", WS: true, WSOnly: true},
	{Name: "gobwas", WS: true, WSOnly: true},
	{Name: "fasthttp-ws", WS: true, WSOnly: true},
}

// Baseline is the framework the reports' ratios divide by.
const Baseline = "celeris"

// Sizes used by the upload and download scenarios.
const (
	UploadSize   = 4 << 10
	DownloadSize = 64 << 10
)

// Scenario is one route and the answer every peer must give.
type Scenario struct {
	Name   string
	Method string
	Path   string
	// BodySize is the request body length (0: no body).
	BodySize int
	// Want is the exact response body (WantLen is used when Want is empty).
	Want    string
	WantLen int
	// Proto is WS for a WebSocket scenario ("" for HTTP: h1 and h2c).
	Proto string
	// MsgSize is a WebSocket echo's message size in bytes.
	MsgSize int
	// Idle: the WebSocket connections exchange one message each, then stay
	// quiet while the server's memory is read.
	Idle bool
}

// Scenarios lists every scenario in report order.
var Scenarios = []Scenario{
	{Name: "simple", Method: "GET", Path: "/bench", Want: "OK"},
	{Name: "json", Method: "GET", Path: "/json", Want: `{"message":"Hello, World!"}`},
	{Name: "params", Method: "GET", Path: "/users/42/posts/7", Want: "user=42 post=7"},
	{Name: "upload", Method: "POST", Path: "/upload", BodySize: UploadSize, Want: strconv.Itoa(UploadSize)},
	{Name: "download", Method: "GET", Path: "/download?size=" + strconv.Itoa(DownloadSize), WantLen: DownloadSize},
	{Name: "ws64", Method: "GET", Path: WSPath, Proto: WS, MsgSize: 64},
	{Name: "ws16k", Method: "GET", Path: WSPath, Proto: WS, MsgSize: 16 << 10},
	{Name: "wsidle", Method: "GET", Path: WSPath, Proto: WS, MsgSize: 64, Idle: true},
}

// For reports whether the scenario runs over proto.
func (s Scenario) For(proto string) bool {
	if s.Proto == WS {
		return proto == WS
	}
	return proto != WS
}

// Message returns a WebSocket scenario's message (fresh bytes, a repeating
// alphabet so that an echo that shifts or drops bytes is noticed).
func (s Scenario) Message() []byte {
	b := make([]byte, s.MsgSize)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// Body returns the scenario's request body (nil when it has none). The bytes
// are fresh on every call; callers may keep them.
func (s Scenario) Body() []byte {
	if s.BodySize == 0 {
		return nil
	}
	b := make([]byte, s.BodySize)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// Check reports whether body is the answer the scenario expects.
func (s Scenario) Check(status int, body []byte) error {
	if status != 200 {
		return fmt.Errorf("%s %s: status %d, want 200", s.Method, s.Path, status)
	}
	if s.Want != "" && string(body) != s.Want {
		return fmt.Errorf("%s %s: body %q, want %q", s.Method, s.Path, trim(body), s.Want)
	}
	if s.Want == "" && len(body) != s.WantLen {
		return fmt.Errorf("%s %s: body length %d, want %d", s.Method, s.Path, len(body), s.WantLen)
	}
	return nil
}

func trim(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

// LookupFramework finds a framework by name.
func LookupFramework(name string) (Framework, bool) {
	for _, f := range Frameworks {
		if f.Name == name {
			return f, true
		}
	}
	return Framework{}, false
}

// LookupScenario finds a scenario by name.
func LookupScenario(name string) (Scenario, bool) {
	for _, s := range Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Supports reports whether the framework speaks the protocol.
func (f Framework) Supports(proto string) bool {
	if IsTLS(proto) && f.Engine != "" {
		return false // the demo's TLS listener ignores -engine
	}
	switch proto {
	case H1:
		return !f.WSOnly && !f.H3Only
	case H2C, H2TLS:
		return f.H2C
	case H1TLS:
		return !f.WSOnly && !f.H3Only
	case H3:
		return f.H3
	case WS:
		return f.WS
	}
	return false
}

// Relevant reports whether the framework belongs in proto's tables: the
// HTTP frameworks in h1, h2c, h1tls and h2tls (a row says "skipped" where one lacks h2c),
// the WebSocket frameworks in ws. Elsewhere it is not run and has no row.
func (f Framework) Relevant(proto string) bool {
	if proto == WS {
		return f.WS
	}
	if proto == H3 {
		return f.H3
	}
	if IsTLS(proto) && f.Engine != "" {
		return false
	}
	return !f.WSOnly && !f.H3Only
}

// FrameworkNames returns every framework name in report order.
func FrameworkNames() []string {
	out := make([]string, len(Frameworks))
	for i, f := range Frameworks {
		out[i] = f.Name
	}
	return out
}

// ScenarioNames returns every scenario name in report order.
func ScenarioNames() []string {
	out := make([]string, len(Scenarios))
	for i, s := range Scenarios {
		out[i] = s.Name
	}
	return out
}
