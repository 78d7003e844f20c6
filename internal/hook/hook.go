// Package hook lets packages of the core module outside the root (websocket,
// celeristest) reach the root package's internals without an import cycle: the
// root package fills the functions in its init. Modules other than the core
// use the exported API instead (a celeris.Transport gets its handler in
// celeris.TransportEnv; package transport holds the request model).
package hook

import (
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/work"
)

// Switch switches the connection (or HTTP/2 stream) of a *celeris.Context to the
// protocol newProto builds (httpmsg.Switcher), answering with header. status is
// what the answer's status is (101 or 200). Set by the root package.
var Switch func(ctx any, header []httpmsg.Field, newProto func(httpmsg.Conn) httpmsg.Proto) (status int, err error)

// Pool returns the worker pool of the server a *celeris.Context's request came
// to (Config.MaxWorkers bounds it; Shutdown stops it), or nil outside a served
// request. Set by the root package.
var Pool func(ctx any) *work.Pool

// Handler returns a *celeris.Server as the httpmsg.Handler the protocols call
// (Prepare on the loop, Serve inline or on a worker): what an in-module
// test harness (celeristest) serves requests with. The
// Server's own methods for it are not exported. Set by the root package.
var Handler func(server any) httpmsg.Handler
