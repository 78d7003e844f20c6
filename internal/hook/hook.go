// Package hook lets packages of this module outside the root (websocket,
// celeristest, transports such as HTTP/3) reach the root package's internals
// without an import cycle: the root package fills the functions in its init.
package hook

import (
	"reflect"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/work"
)

// Switch switches the connection (or HTTP/2 stream) of a *celeris.Context to the
// protocol newProto builds (httpmsg.Switcher), answering with header. status is
// what the answer's status is (101 or 200). Set by the root package.
var Switch func(ctx any, header []httpmsg.Field, newProto func(httpmsg.Conn) httpmsg.Proto) (status int, err error)

// tunnelCode holds the code pointers of the route handlers that serve RFC 8441
// extended CONNECT (the websocket package's Handler and Events closures). Written
// by package init functions only, read when a server starts.
var tunnelCode = map[uintptr]bool{}

// MarkTunnel records that route handlers built like h (a closure returned by the
// same function: they share its code) answer an extended CONNECT by switching to
// a tunnel (websocket.Handler, websocket.Events). Call it from an init function.
func MarkTunnel(h any) {
	tunnelCode[codeOf(h)] = true
}

// IsTunnel reports whether the route handler h was built by a function marked
// with MarkTunnel.
func IsTunnel(h any) bool {
	p := codeOf(h)
	return p != 0 && tunnelCode[p]
}

// codeOf is the code pointer of a func value (0 for anything else): closures of
// one function literal share it (reflect.Value.Pointer).
func codeOf(h any) uintptr {
	v := reflect.ValueOf(h)
	if v.Kind() != reflect.Func || v.IsNil() {
		return 0
	}
	return v.Pointer()
}

// Pool returns the worker pool of the server a *celeris.Context's request came
// to (Config.MaxWorkers bounds it; Shutdown stops it), or nil outside a served
// request. Set by the root package.
var Pool func(ctx any) *work.Pool

// Handler returns a *celeris.Server as the httpmsg.Handler the protocols call
// (Prepare on the loop, Serve inline or on a worker): what an in-module
// transport or test harness (celeristest, HTTP/3) serves requests with. The
// Server's own methods for it are not exported. Set by the root package.
var Handler func(server any) httpmsg.Handler
