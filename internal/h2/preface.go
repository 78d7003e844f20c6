package h2

import (
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
)

// The client's connection preface is the magic string followed by a SETTINGS
// frame (RFC 9113 §3.4). A client that sends the magic and then nothing would
// otherwise hold the connection for the idle timeout, since an HTTP/2
// connection without streams holds no partial request the engine could time
// out. The preface, SETTINGS included, must therefore arrive within
// Config.SettingsTimeout of the connection's start (the read-header timeout,
// as for the first request of an HTTP/1.1 connection; net/http's HTTP/2 server
// allows 10 s for the magic and then 2 s for the first frame). Past it the
// connection ends with GOAWAY SETTINGS_TIMEOUT: the SETTINGS frame the server
// sent in its own preface has not been acknowledged either, which RFC 9113
// §6.5.3 lets an endpoint treat as a connection error of that type (a client
// cannot acknowledge before its own SETTINGS, §3.4), and nothing it sent is
// invalid, which PROTOCOL_ERROR would claim.
//
// The timer is armed only when a callback ends with the preface incomplete (a
// client normally sends the magic and its SETTINGS in one segment, so the
// common connection arms none), and on an upgraded connection, whose preface
// follows the 101 response.

const defaultSettingsTimeout = 10 * time.Second

// watchPreface arms the preface timer when the preface is incomplete and no timer
// runs, and stops it once the preface is complete. Loop only.
func (c *Conn) watchPreface() {
	switch {
	case c.phase == phaseOpen || c.phase == phaseClosed:
		if c.prefaceTimer != nil {
			c.prefaceTimer.Stop()
			c.prefaceTimer = nil
		}
	case c.prefaceTimer == nil:
		left := max(c.cfg.SettingsTimeout-time.Since(c.born), 0)
		c.prefaceTimer = time.AfterFunc(left, c.prefaceExpired)
	}
}

// prefaceExpired runs on the timer's goroutine: it asks the loop to end the
// connection (OnWake, prefaceCheck) unless it closed already.
func (c *Conn) prefaceExpired() {
	c.prefaceLate.Store(true)
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if !closed {
		c.nc.Wake()
	}
}

// prefaceCheck ends the connection with GOAWAY SETTINGS_TIMEOUT when the timer
// fired before the preface was complete. Loop only.
func (c *Conn) prefaceCheck() {
	if c.prefaceLate.Load() && (c.phase == phasePreface || c.phase == phaseSettings) {
		c.connError(frame.ConnError{Code: frame.ErrCodeSettingsTimeout, Reason: "no SETTINGS frame within the read-header timeout"})
	}
}
