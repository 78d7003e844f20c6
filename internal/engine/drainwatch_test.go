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
			{64 << 10, 6 << 20, 2 << 20, 10 * ms, 640 * time.Millisecond, false},
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
