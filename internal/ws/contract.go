package ws

import "github.com/celeris-dev/celeris/internal/httpmsg"

// What WebSocket offers of the engine-protocol contract (internal/httpmsg,
// contract.go), checked at compile time.
var (
	_ httpmsg.Proto         = (*Conn)(nil)
	_ httpmsg.Drainer       = (*Conn)(nil)
	_ httpmsg.FlushObserver = (*Conn)(nil)
	_ httpmsg.DrainWaiter   = (*Conn)(nil)
	_ httpmsg.OutputPooler  = (*Conn)(nil)
)
