package h2

import (
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// TestOutboundBoundsLargeWindow: a peer that grants 2 GiB windows and never
// reads does not get a whole complete response (8 MiB here) framed into the
// engine's output in one callback: each callback hands the engine at most
// outboundLimit bytes of DATA and asks for another (Wake), and DATA waits while
// the engine holds more than outboundLimit. Before, holdData looked at the
// engine's output only before sendData, which then framed all the windows
// allowed: over TLS, a client asking for the demo's 64 MiB /download with large
// windows grew the server by some 350 MB (internal/demo TestOutputBoundedPerConnection measures it).
func TestOutboundBoundsLargeWindow(t *testing.T) {
	const size = 8 << 20
	body := make([]byte, size)
	for _, inline := range []bool{false, true} {
		t.Run(map[bool]string{true: "inline", false: "worker"}[inline], func(t *testing.T) {
			hs := newHarness(t, handlerFunc{
				inline: func(*httpmsg.Request) bool { return inline },
				serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
					_ = w.WriteResponse(200, nil, body)
				},
			}, nil)
			// The engine: what was written and not yet taken is unsent.
			unsent := func() int {
				hs.fc.mu.Lock()
				defer hs.fc.mu.Unlock()
				return len(hs.fc.out)
			}
			hs.c.setOutboundBuffered(unsent)
			hs.handshake(frame.Setting{ID: frame.SettingInitialWindowSize, Val: frame.MaxWindow})
			hs.send(frame.AppendWindowUpdate(nil, 0, frame.MaxWindow-65535))
			hs.send(frame.AppendHeaders(nil, 1, true, true, hs.get("/big")))
			got, most := 0, 0
			deadline := time.Now().Add(10 * time.Second)
			for got < size && time.Now().Before(deadline) {
				// A callback: the engine's drain wake-up (DrainLevel reached), or
				// a Wake.
				if l := hs.c.DrainLevel(); l >= 0 && unsent() <= l {
					if err := hs.c.OnWake(); err != nil {
						t.Fatal(err)
					}
				} else {
					select {
					case <-hs.fc.wake:
						if err := hs.c.OnWake(); err != nil {
							t.Fatal(err)
						}
					case <-time.After(100 * time.Millisecond):
					}
				}
				held := unsent()
				most = max(most, held)
				if held > 2*outboundLimit+64<<10 {
					t.Fatalf("the engine holds %d unsent bytes after one callback (limit %d)", held, outboundLimit)
				}
				// The client reads now: the socket takes everything.
				hs.rbuf = append(hs.rbuf, hs.fc.take()...)
				for {
					f, n, err := frame.Parse(hs.rbuf, frame.MaxMaxFrameSize)
					if err != nil {
						break
					}
					if f.Type == frame.TypeData && f.StreamID == 1 {
						got += len(f.Data)
						if f.EndStream() != (got == size) {
							t.Fatalf("END_STREAM %v at %d of %d bytes", f.EndStream(), got, size)
						}
					}
					hs.rbuf = hs.rbuf[n:]
				}
			}
			if got != size {
				t.Fatalf("got %d of %d bytes", got, size)
			}
			t.Logf("at most %d bytes unsent in the engine", most)
		})
	}
}
