//go:build !race

package websocket_test

import (
	"io"
	"runtime"
	"testing"

	"github.com/celeris-dev/celeris/internal/ws"
)

// TestEchoAllocs: in steady state an echo over a real socket (client and server
// in this process: the counts cover both) allocates no buffer per message,
// 64-byte or 16 KiB, with callbacks or a blocking handler: message and output
// buffers are reused or pooled (internal/bufpool), not made per message. An
// answer written while the loop yields to the worker (OnData) costs nothing more
// (0.02-0.05 allocations per echo measured); one written later wakes the loop,
// and gnet's EventLoop.Execute allocates its closure and a queue node (2 objects,
// 64 bytes, once per loop iteration however many connections it wakes): the
// bound allows that, and fails on any per-message buffer.
func TestEchoAllocs(t *testing.T) {
	if testEngine != "" && testEngine != "gnet" {
		t.Skip("the gnet engine's path")
	}
	addr := startServer(t, echoRoutes)
	for _, path := range []string{"/events", "/handler"} {
		for _, size := range []int{64, 16 << 10} {
			c, resp := dial(t, addr, path)
			if resp.StatusCode != 101 {
				t.Fatalf("%s: status %d", path, resp.StatusCode)
			}
			key := [4]byte{1, 2, 3, 4}
			payload := make([]byte, size)
			for i := range payload {
				payload[i] = byte(i)
			}
			frame := ws.AppendHeader(nil, true, false, ws.OpBinary, size, true, key)
			start := len(frame)
			frame = append(frame, payload...)
			ws.Mask(key, 0, frame[start:])
			echo := make([]byte, len(ws.AppendHeader(nil, true, false, ws.OpBinary, size, false, [4]byte{}))+size)
			var failed error
			roundTrip := func() {
				if _, err := c.nc.Write(frame); err != nil {
					failed = err
					return
				}
				if _, err := io.ReadFull(c.br, echo); err != nil {
					failed = err
				}
			}
			for range 200 {
				roundTrip()
			}
			const runs = 500
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				roundTrip()
			}
			runtime.ReadMemStats(&after)
			allocs := float64(after.Mallocs-before.Mallocs) / runs
			bytes := float64(after.TotalAlloc-before.TotalAlloc) / runs
			if failed != nil {
				t.Fatalf("%s %d bytes: %v", path, size, failed)
			}
			if echo[len(echo)-1] != payload[size-1] || echo[len(echo)-size] != payload[0] {
				t.Fatalf("%s %d bytes: wrong echo", path, size)
			}
			t.Logf("%s, %d-byte messages: %.2f allocations, %.0f bytes per echo", path, size, allocs, bytes)
			if allocs > 2.5 || bytes > 256 {
				t.Errorf("%s, %d-byte messages: %.2f allocations, %.0f bytes per echo; want at most the engine's wake-up (2, 64 bytes)", path, size, allocs, bytes)
			}
			c.nc.Close()
		}
	}
}
