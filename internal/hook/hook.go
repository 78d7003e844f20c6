// Package hook lets packages of this module outside the root (websocket) reach
// the root package's Context internals without an import cycle: the root package
// fills the functions in its init.
package hook

import "github.com/celeris-dev/celeris/internal/httpmsg"

// Switch switches the connection (or HTTP/2 stream) of a *celeris.Context to the
// protocol newProto builds (httpmsg.Switcher), answering with header. status is
// what the answer's status is (101 or 200). Set by the root package.
var Switch func(ctx any, header []httpmsg.Field, newProto func(httpmsg.Conn) httpmsg.Proto) (status int, err error)

// Handler returns the httpmsg.Handler of a *celeris.Server (its router,
// middleware and error handling), for a transport of another module (HTTP/3)
// to serve the same routes. Set by the root package.
var Handler func(server any) httpmsg.Handler
