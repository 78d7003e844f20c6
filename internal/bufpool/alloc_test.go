//go:build !race

package bufpool

import "testing"

// (Under -race a sync.Pool drops a share of what it is given, at random.)
func TestAllocs(t *testing.T) {
	if testing.AllocsPerRun(100, func() { Put(Get(16 << 10)) }) > 0 {
		t.Fatal("Get/Put of a pooled size allocates")
	}
}
