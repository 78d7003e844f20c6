package h1

import "github.com/celeris-dev/celeris/internal/httpmsg"

// What HTTP/1.1 offers of the engine-protocol contract (internal/httpmsg,
// contract.go), checked at compile time.
var (
	_ httpmsg.Proto         = (*Conn)(nil)
	_ httpmsg.Drainer       = (*Conn)(nil)
	_ httpmsg.Upgrader      = (*Conn)(nil)
	_ httpmsg.ProtoSwitcher = (*Conn)(nil)
	_ httpmsg.FlushObserver = (*Conn)(nil)
	_ httpmsg.DrainWaiter   = (*Conn)(nil)
	_ httpmsg.BodyAwaiter   = (*Conn)(nil)
	_ httpmsg.InputEnder    = (*Conn)(nil)
	_ httpmsg.BodyAborter   = (*Conn)(nil)

	_ httpmsg.ResponseWriter      = (*exchange)(nil)
	_ httpmsg.Switcher            = (*exchange)(nil)
	_ httpmsg.InformationalWriter = (*exchange)(nil)
	_ httpmsg.SizedWriter         = (*exchange)(nil)
	_ httpmsg.ContextWriter       = (*exchange)(nil)
	_ httpmsg.Hijacker            = (*exchange)(nil)
	_ httpmsg.LoopWriter          = (*exchange)(nil)
	_ httpmsg.Aborter             = (*exchange)(nil)
)
