//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import "github.com/celeris-dev/celeris/internal/httpmsg"

// What the gnet engine offers of the engine-protocol contract (internal/httpmsg,
// contract.go), checked at compile time. It has no DirectRunner (handlers run
// on workers or inline on the loop) and no TLSConn (TLS is the std engine's).
var (
	_ httpmsg.Conn             = (*conn)(nil)
	_ httpmsg.OwnedWriter      = (*conn)(nil)
	_ httpmsg.OutboundReporter = (*conn)(nil)
	_ httpmsg.Hijacker         = (*conn)(nil)
)
