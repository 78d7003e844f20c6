package h2

import (
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
)

// Two-step GOAWAY (RFC 9113 §6.8): a GOAWAY that names the highest stream seen
// so far refuses the streams the client sent meanwhile, which it must then
// retry (a load tool counts them as failed). Drain therefore first sends
// GOAWAY with the largest stream id and a PING; once the PING's ACK comes, every
// stream the client opened before it read the first GOAWAY has arrived, and
// the final GOAWAY names the last of them (Shutdown). A client that does not
// answer the PING gets the final GOAWAY after goAwayWait.

// goAwayWait bounds the wait for the ACK of Drain's PING.
const goAwayWait = time.Second

// goAwayPingData is the payload of Drain's PING.
var goAwayPingData = [8]byte{'c', 'e', 'l', 'e', 'r', 'i', 's', 'G'}

// Drain starts the two-step graceful close: GOAWAY with the largest stream id,
// then PING; the final GOAWAY follows the PING's ACK (onGoAwayPingAck) or
// goAwayWait (checkGoAwayWait, on a wake). Call on the loop.
func (c *Conn) Drain() {
	c.enter()
	if c.phase == phaseClosed || c.goingAway || !c.goAwayBy.IsZero() {
		return
	}
	c.goAwayBy = time.Now().Add(goAwayWait)
	c.out = frame.AppendGoAway(c.out, 1<<31-1, frame.ErrCodeNo, nil)
	c.out = frame.AppendPing(c.out, false, goAwayPingData)
	nc := c.nc
	time.AfterFunc(goAwayWait, nc.Wake)
	c.afterIO()
}

// onGoAwayPingAck handles a PING ACK: the ACK of Drain's PING sends the final
// GOAWAY (afterIO, at the end of the callback, writes it).
func (c *Conn) onGoAwayPingAck(data [8]byte) {
	if !c.goAwayBy.IsZero() && !c.goingAway && data == goAwayPingData {
		c.finalGoAway()
	}
}

// checkGoAwayWait sends the final GOAWAY once goAwayWait passed without the
// PING's ACK (on a wake).
func (c *Conn) checkGoAwayWait() {
	if !c.goAwayBy.IsZero() && !c.goingAway && c.phase != phaseClosed && !time.Now().Before(c.goAwayBy) {
		c.finalGoAway()
	}
}

// finalGoAway sends GOAWAY NO_ERROR naming the highest stream seen; later
// streams are ignored.
func (c *Conn) finalGoAway() {
	c.goingAway = true
	c.lastProcessed = max(c.lastProcessed, c.maxStreamID)
	c.out = frame.AppendGoAway(c.out, c.maxStreamID, frame.ErrCodeNo, nil)
}
