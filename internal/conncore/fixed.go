package conncore

import (
	"errors"

	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// errNoSwitch: a connection whose protocol was given (NewFixed) has no other
// to switch to.
var errNoSwitch = errors.New("conncore: this connection's protocol cannot hand over")

// NewFixed returns the core of a connection c that carries protocol p from the
// start, chosen by no bytes and switching to no other (an HTTP/2 or HTTP/3
// tunnel carrying WebSocket: celeris's tunnel.go). It has no deadlines: the
// stream that carries it has its own.
func NewFixed(c httpmsg.Conn, p httpmsg.Proto) *Core {
	core := &Core{conn: c}
	core.setProto(p)
	return core
}
