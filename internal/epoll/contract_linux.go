package epoll

import "github.com/celeris-dev/celeris/internal/httpmsg"

// What the epoll engine offers of the engine-protocol contract (internal/httpmsg,
// contract.go), checked at compile time. It has no TLSConn (TLS is the std
// engine's).
var (
	_ httpmsg.Conn             = (*conn)(nil)
	_ httpmsg.OwnedWriter      = (*conn)(nil)
	_ httpmsg.OutboundReporter = (*conn)(nil)
	_ httpmsg.Hijacker         = (*conn)(nil)
	_ httpmsg.DirectRunner     = (*conn)(nil)
)
