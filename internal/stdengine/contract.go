package stdengine

import "github.com/celeris-dev/celeris/internal/httpmsg"

// What the std engine offers of the engine-protocol contract (internal/httpmsg,
// contract.go), checked at compile time.
var (
	_ httpmsg.Conn             = (*conn)(nil)
	_ httpmsg.OwnedWriter      = (*conn)(nil)
	_ httpmsg.OutboundReporter = (*conn)(nil)
	_ httpmsg.Hijacker         = (*conn)(nil)
	_ httpmsg.DirectRunner     = (*conn)(nil)
	_ httpmsg.TLSConn          = (*conn)(nil)
)
