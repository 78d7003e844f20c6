//go:build !race

package ws

import (
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/work"
)

// newEchoRig returns a function that drives one echo of frame through a Conn
// with callbacks (OnMessage writes the message back), the caller playing the
// event loop: OnData, then OnWake once the worker wrote.
func newEchoRig(tb testing.TB, frame []byte) func() {
	tr := &memTransport{wake: make(chan struct{}, 1)}
	pool := work.NewPool(0, time.Minute)
	c := NewConn(tr, Config{MaxMessage: 1 << 20, Pool: pool}, App{
		OnOpen: func(*Conn) {},
		OnMessage: func(c *Conn, op Opcode, p []byte) error {
			return c.WriteMessage(op, p)
		},
	})
	c.Start()
	return func() {
		tr.out = tr.out[:0]
		if n, err := c.OnData(frame); n != len(frame) || err != nil {
			tb.Fatalf("OnData: %d %v", n, err)
		}
		for len(tr.out) == 0 {
			<-tr.wake
			_ = c.OnWake()
			c.AfterFlush(0)
		}
	}
}

// TestAllocsSmallMessageEcho: a small message read on the loop, echoed by a
// callback on a worker and written back costs no allocation in steady state
// (pooled message buffers, the queue's backing array, the output's two buffers).
func TestAllocsSmallMessageEcho(t *testing.T) {
	echo := newEchoRig(t, clientFrame(true, OpText, []byte("hello, 64-byte message .....................................")))
	for range 100 {
		echo()
	}
	if a := testing.AllocsPerRun(1000, echo); a != 0 {
		t.Fatalf("%.2f allocations per small-message echo, want 0", a)
	}
}

// echoBench drives size-byte echoes through newEchoRig.
func echoBench(b *testing.B, size int) {
	echo := newEchoRig(b, clientFrame(true, OpBinary, make([]byte, size)))
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		echo()
	}
}

func BenchmarkEcho64(b *testing.B)  { echoBench(b, 64) }
func BenchmarkEcho16K(b *testing.B) { echoBench(b, 16<<10) }
