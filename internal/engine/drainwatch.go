//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import "time"

// gnet reports nothing when its output buffer drains into the socket. A protocol
// that waits for the drain (a streaming handler blocked on back-pressure, HTTP/2
// DATA held back) would wait for the engine's 100 ms ticker, which would leave a
// fast client's socket idle for most of that time. So the loop estimates how fast the
// connection's unsent output drains and arms a timer for when it should be down
// to the level the protocol waits for. Slow drains (more than tickerPeriod away)
// are left to the ticker, so timers run only for clients that read fast; a client
// that stops reading backs the timer off (doubling waits) to the ticker.

const (
	tickerPeriod = 100 * time.Millisecond
	minDrainWait = 500 * time.Microsecond
	// stallAfter is how long output may sit unmoved before the client counts as
	// not reading. The kernel reports a socket writable only once half of what it
	// queued went out, so gnet's buffer moves in bursts even for a steady reader:
	// several milliseconds apart with a send buffer of a few MiB.
	stallAfter = 50 * time.Millisecond
)

// drainWatch is a connection's drain estimate; owned by its event loop.
type drainWatch struct {
	last  int           // unsent output after the previous flush; 0: none
	at    int64         // when last was observed, unix ns
	moved int64         // when output was last seen to drain (or began to wait), unix ns
	rate  float64       // bytes per ns the socket took, smoothed; 0: unknown
	peak  float64       // highest rate measured
	wait  time.Duration // the previous wait asked for (backoff); 0: none
	timer *time.Timer
}

// watchDrain runs after a flush. drained is how much of the previous flush's
// unsent output the socket took since (-1: there was none); outbound is what is
// unsent now.
func (c *conn) watchDrain(drained, outbound int) {
	level := -1
	if outbound > 0 {
		level = c.core.DrainLevel()
	}
	wait, ok := c.dw.observe(drained, outbound, level, time.Now().UnixNano())
	switch {
	case !ok:
		if c.dw.timer != nil {
			c.dw.timer.Stop()
		}
	case c.dw.timer == nil:
		c.dw.timer = time.AfterFunc(wait, c.Wake)
	default:
		c.dw.timer.Reset(wait)
	}
}

// observe updates the estimate with a flush seen at now and says when to wake the
// connection: when outbound should be down to level, if that is sooner than the
// ticker (ok false: no wake needed, or the ticker's is as good).
func (w *drainWatch) observe(drained, outbound, level int, now int64) (wait time.Duration, ok bool) {
	stalled := false
	switch {
	case w.last == 0:
		w.moved = now // output starts to wait
	case drained == 0:
		if time.Duration(now-w.moved) >= stallAfter {
			stalled = true
			w.rate /= 2
		}
	case drained > 0 && w.at != 0 && now > w.at:
		w.moved = now
		r := float64(drained) / float64(now-w.at)
		w.peak = max(w.peak, r)
		switch {
		case drained >= w.last:
			// Drained completely: the socket may have idled part of the time, so
			// r is a lower bound. Wake sooner next time, within reason.
			w.rate = min(max(2*w.rate, r), 2*w.peak)
		case w.rate == 0:
			w.rate = r
		default:
			w.rate = (w.rate + r) / 2
		}
	}
	w.last, w.at = outbound, now
	if outbound == 0 || level < 0 || outbound <= level {
		w.wait = 0
		return 0, false
	}
	wait = minDrainWait
	if w.rate > 0 {
		ns := float64(outbound-level) / w.rate
		if ns >= float64(tickerPeriod) {
			w.wait = tickerPeriod
			return 0, false // the ticker comes as soon
		}
		wait = max(time.Duration(ns), minDrainWait)
	}
	if stalled {
		// Nothing moved for stallAfter: the client may have stopped reading.
		// Double the wait until the ticker takes over.
		wait = max(wait, 2*w.wait)
	}
	w.wait = wait
	return wait, wait < tickerPeriod
}

// stopDrainWatch stops the timer of a closing connection (event loop).
func (c *conn) stopDrainWatch() {
	if c.dw.timer != nil {
		c.dw.timer.Stop()
	}
}
