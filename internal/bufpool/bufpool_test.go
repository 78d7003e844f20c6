package bufpool

import "testing"

func TestGetCapacity(t *testing.T) {
	for _, tc := range []struct{ n, want int }{
		{0, 4096 + Slack}, {1, 4096 + Slack}, {4096, 4096 + Slack}, {4096 + Slack, 4096 + Slack},
		{4097 + Slack, 8192 + Slack}, {16384, 16384 + Slack}, {16384 + 14, 16384 + Slack},
		{16384 + Slack + 1, 32768 + Slack}, {MaxSize, MaxSize}, {MaxSize + 1, MaxSize + 1},
	} {
		b := Get(tc.n)
		if len(b) != 0 || cap(b) != tc.want {
			t.Errorf("Get(%d): len %d cap %d, want 0 and %d", tc.n, len(b), cap(b), tc.want)
		}
	}
}

func TestPutClass(t *testing.T) {
	// A buffer filed under a class comes back with that class's capacity, which
	// its own covers: 24 KiB is filed as 16 KiB (plus Slack); 32 KiB, without
	// the slack, as 16 KiB too.
	for _, tc := range []struct{ capacity, class int }{
		{MinSize, MinSize}, {24 << 10, 16<<10 + Slack}, {32 << 10, 16<<10 + Slack},
		{32<<10 + Slack, 32<<10 + Slack}, {2 * MaxSize, MaxSize},
	} {
		b := make([]byte, 0, tc.capacity)
		for i := 0; i < 100; i++ {
			Put(b)
			g := Get(tc.class)
			if cap(g) != tc.class {
				t.Fatalf("cap %d: Get(%d) gave cap %d", tc.capacity, tc.class, cap(g))
			}
			if &g[:1][0] == &b[:1][0] {
				break // got it back (a pool may drop a Put, under -race at random)
			}
		}
	}
}

func TestPutIgnores(t *testing.T) {
	Put(nil)
	Put(make([]byte, 10))
	Put(make([]byte, 0, 4096)) // below the smallest class
	Put(make([]byte, 0, 3*MaxSize))
}

func BenchmarkGetPut16K(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Put(Get(16 << 10))
	}
}
