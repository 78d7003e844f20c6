//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import (
	"testing"
	"time"
)

func TestDrainWatchObserve(t *testing.T) {
	const ms = int64(time.Millisecond)
	type step struct {
		drained, outbound, level int
		at                       int64 // ns since start
		wait                     time.Duration
		ok                       bool
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"nobody waits", []step{
			{-1, 8 << 20, -1, 0, 0, false},
		}},
		{"already at the level", []step{
			{-1, 2 << 20, 2 << 20, 0, 0, false},
		}},
		{"no rate yet: shortest wait", []step{
			{-1, 6 << 20, 2 << 20, 0, minDrainWait, true},
		}},
		{"measured rate: wake when the level is due", []step{
			{-1, 6 << 20, 2 << 20, 0, minDrainWait, true},
			// 1 MiB taken in 1 ms: 4 MiB above the level are 4 ms away.
			{1 << 20, 6 << 20, 2 << 20, 1 * ms, 4 * time.Millisecond, true},
			// 1 MiB in 2 ms next: the rate is averaged to 0.75 MiB/ms.
			{1 << 20, 5 << 20, 2 << 20, 3 * ms, 4 * time.Millisecond, true},
		}},
		{"drained completely: the rate is a lower bound, wake sooner", []step{
			{-1, 6 << 20, 2 << 20, 0, minDrainWait, true},
			{1 << 20, 6 << 20, 2 << 20, 1 * ms, 4 * time.Millisecond, true},
			// All 6 MiB went within 12 ms (0.5 MiB/ms measured): twice the old rate.
			{6 << 20, 6 << 20, 2 << 20, 13 * ms, 2 * time.Millisecond, true},
		}},
		{"slow reader: left to the ticker", []step{
			{-1, 6 << 20, 2 << 20, 0, minDrainWait, true},
			// 64 KiB in 10 ms: 4 MiB are 640 ms away.
			{64 << 10, 6 << 20, 2 << 20, 10 * ms, 0, false},
		}},
		{"stalled client: waits double until the ticker takes over", []step{
			{-1, 6 << 20, 2 << 20, 0, minDrainWait, true},
			// Output moves in bursts: unmoved for less than stallAfter is no stall.
			{0, 6 << 20, 2 << 20, 1 * ms, minDrainWait, true},
			{0, 6 << 20, 2 << 20, 49 * ms, minDrainWait, true},
			{0, 6 << 20, 2 << 20, 50 * ms, 2 * minDrainWait, true},
			{0, 6 << 20, 2 << 20, 51 * ms, 4 * minDrainWait, true},
			{0, 6 << 20, 2 << 20, 53 * ms, 8 * minDrainWait, true},
			{0, 6 << 20, 2 << 20, 57 * ms, 16 * minDrainWait, true},
			{0, 6 << 20, 2 << 20, 65 * ms, 32 * minDrainWait, true},
			{0, 6 << 20, 2 << 20, 81 * ms, 64 * minDrainWait, true},
			{0, 6 << 20, 2 << 20, 113 * ms, 128 * minDrainWait, true},
			{0, 6 << 20, 2 << 20, 177 * ms, 256 * minDrainWait, false},
			{0, 6 << 20, 2 << 20, 277 * ms, 0, false},
			// It reads again (1 MiB in 1 ms): back to the measured rate.
			{1 << 20, 6 << 20, 2 << 20, 278 * ms, 4 * time.Millisecond, true},
		}},
		{"a stalled measured rate halves, and the backoff still doubles", []step{
			{-1, 6 << 20, 2 << 20, 0, minDrainWait, true},
			{1 << 20, 6 << 20, 2 << 20, 1 * ms, 4 * time.Millisecond, true},
			{0, 6 << 20, 2 << 20, 5 * ms, 4 * time.Millisecond, true},
			// Unmoved for 50 ms: rate 0.5 MiB/ms puts the level 8 ms away.
			{0, 6 << 20, 2 << 20, 51 * ms, 8 * time.Millisecond, true},
		}},
		{"complete drains raise the rate to twice the peak at most", []step{
			{-1, 6 << 20, 2 << 20, 0, minDrainWait, true},
			{1 << 20, 6 << 20, 2 << 20, 1 * ms, 4 * time.Millisecond, true},
			{6 << 20, 6 << 20, 2 << 20, 7 * ms, 2 * time.Millisecond, true},
			// Again complete, at 1 MiB/ms: the rate would double to 4 MiB/ms, but the
			// peak is 1 MiB/ms, so 2 MiB/ms: 2 ms.
			{6 << 20, 6 << 20, 2 << 20, 13 * ms, 2 * time.Millisecond, true},
		}},
		{"a rate too low for a float duration is left to the ticker", []step{
			{-1, 6 << 20, 2 << 20, 0, minDrainWait, true},
			{1, 6 << 20, 2 << 20, 1e12 * ms, 0, false},
		}},
		{"output gone: nothing to watch", []step{
			{-1, 6 << 20, 2 << 20, 0, minDrainWait, true},
			{6 << 20, 0, -1, 1 * ms, 0, false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w drainWatch
			base := int64(1e18)
			for i, s := range tc.steps {
				wait, ok := w.observe(s.drained, s.outbound, s.level, base+s.at)
				if ok != s.ok || (s.wait != 0 && wait != s.wait) {
					t.Fatalf("step %d: wait %v ok %v, want %v %v", i, wait, ok, s.wait, s.ok)
				}
			}
		})
	}
}
