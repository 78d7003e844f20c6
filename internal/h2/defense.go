package h2

import (
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
)

// Flood bounds. Each counts events within a window of about a second (checked
// lazily, so the clock is read once per limit's worth of events, not per frame).
const (
	// maxControlFrames bounds the control frames we queue in answer (PING and
	// SETTINGS ACKs, REFUSED_STREAM resets) while the peer does not read them
	// (CVE-2019-9512 ping flood, CVE-2019-9515 settings flood).
	maxControlFrames = 10000
	// maxEmptyFrames bounds zero-length DATA frames without END_STREAM and empty
	// header fragments (CVE-2019-9518).
	maxEmptyFrames = 1000
	// maxResets bounds resets of unfinished streams beyond twice the streams
	// completed in the same window: the client's RST_STREAM (CVE-2023-44487
	// rapid reset) and ours in answer to its frames (CVE-2025-8671 MadeYouReset,
	// see Conn.resetForPeer) alike.
	maxResets = 100
)

// defenses holds the flood counters. Owned by the event loop.
type defenses struct {
	ctrl      int
	ctrlSince time.Time
	empty     int
	emptySec  time.Time
	resets    int
	completed int // streams completed normally in the reset window
	resetSec  time.Time
}

func (d *defenses) init(now time.Time) {
	d.ctrlSince, d.emptySec, d.resetSec = now, now, now
}

// onRead runs when bytes arrive: with an httpmsg.OutboundReporter, an engine that has
// sent everything shows that the peer reads, so queued control frames are gone.
func (d *defenses) onRead(c *Conn) {
	if c.outbound != nil && d.ctrl > 0 && c.outbound() == 0 {
		d.ctrl = 0
	}
}

// controlFrame counts one control frame queued in answer to the peer.
func (d *defenses) controlFrame(c *Conn) error {
	d.ctrl++
	if d.ctrl <= maxControlFrames {
		return nil
	}
	if c.outbound != nil {
		if c.outbound() == 0 {
			d.ctrl = 1
			return nil
		}
	} else if now := time.Now(); now.Sub(d.ctrlSince) > time.Second {
		d.ctrl, d.ctrlSince = 1, now
		return nil
	}
	return connErr(frame.ErrCodeEnhanceYourCalm, "control frame flood")
}

// emptyFrame counts one frame that carried nothing.
func (d *defenses) emptyFrame(*Conn) error {
	d.empty++
	if d.empty <= maxEmptyFrames {
		return nil
	}
	if now := time.Now(); now.Sub(d.emptySec) > time.Second {
		d.empty, d.emptySec = 1, now
		return nil
	}
	return connErr(frame.ErrCodeEnhanceYourCalm, "empty frame flood")
}

// reset counts a reset of a stream whose response was unfinished, sent by the
// client (CVE-2023-44487) or by us because of its frames (CVE-2025-8671).
func (d *defenses) reset(*Conn) error {
	d.resets++
	if d.resets <= maxResets || d.resets <= 2*d.completed {
		return nil
	}
	if now := time.Now(); now.Sub(d.resetSec) > time.Second {
		d.resets, d.completed, d.resetSec = 1, 0, now
		return nil
	}
	return connErr(frame.ErrCodeEnhanceYourCalm, "rapid reset")
}
