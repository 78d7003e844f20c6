package h2

import "github.com/celeris-dev/celeris/internal/httpmsg"

// What HTTP/2 offers of the engine-protocol contract (internal/httpmsg,
// contract.go), checked at compile time. HTTP/2 has no InputEnder: its streams
// wait for frames that cannot come once the input ended, so the engine closes
// the connection after the output already queued.
var (
	_ httpmsg.Proto       = (*Conn)(nil)
	_ httpmsg.Drainer     = (*Conn)(nil)
	_ httpmsg.DrainWaiter = (*Conn)(nil)

	_ httpmsg.ResponseWriter      = (*stream)(nil)
	_ httpmsg.InformationalWriter = (*stream)(nil)
	_ httpmsg.SizedWriter         = (*stream)(nil)
	_ httpmsg.ContextWriter       = (*stream)(nil)
	_ httpmsg.LoopWriter          = (*stream)(nil)
	_ httpmsg.Aborter             = (*stream)(nil)
)
