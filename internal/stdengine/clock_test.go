package stdengine

import (
	"testing"
	"time"
)

// monoNow never reads 0 (0 means "no deadline" and "not yet"), does not run
// backwards, and monoTime gives the instant it read: a deadline d from now is d
// from now for the runtime's poller (time.Until, which SetReadDeadline uses).
func TestMonoClock(t *testing.T) {
	a := monoNow()
	if a <= 0 {
		t.Fatalf("monoNow() = %d, want > 0", a)
	}
	for _, d := range []time.Duration{0, time.Millisecond, time.Second, time.Hour} {
		now := monoNow()
		if now < a {
			t.Fatalf("monoNow ran backwards: %d after %d", now, a)
		}
		a = now
		left := time.Until(monoTime(now + int64(d)))
		if left > d || left < d-100*time.Millisecond {
			t.Fatalf("monoTime(now+%v) is %v from now", d, left)
		}
	}
}
