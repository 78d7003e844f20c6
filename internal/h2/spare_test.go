package h2

import (
	"sync"
	"testing"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// countedSpare is a Spare that records its reuse and its recycling.
type countedSpare struct {
	id       int
	recycled *int
	mu       *sync.Mutex
}

func (s *countedSpare) Recycle() {
	s.mu.Lock()
	*s.recycled++
	s.mu.Unlock()
}

// TestStreamKeepsSpare: a stream's Request keeps what the handler left
// (httpmsg.Request.Spare) for the next request it carries, whether the handler
// ran on a worker or inline, so that a Handler takes no pool round trip per
// request; a connection keeps at most maxSpares, and recycles them all when it
// closes.
func TestStreamKeepsSpare(t *testing.T) {
	for _, inline := range []bool{false, true} {
		name := "worker"
		if inline {
			name = "inline"
		}
		t.Run(name, func(t *testing.T) {
			var mu sync.Mutex
			made, reused, recycled := 0, 0, 0
			h := handlerFunc{
				inline: func(r *httpmsg.Request) bool {
					if !r.KeepsSpare {
						t.Error("KeepsSpare not set on an h2 stream's Request")
					}
					mu.Lock()
					if r.Spare != nil {
						reused++
						r.Route = r.Spare
						r.Spare = nil
					} else {
						made++
						r.Route = &countedSpare{id: made, recycled: &recycled, mu: &mu}
					}
					mu.Unlock()
					return inline
				},
				serve: func(r *httpmsg.Request, w httpmsg.ResponseWriter) {
					_ = w.WriteResponse(200, nil, []byte("ok"))
					r.Spare, r.Route = r.Route.(*countedSpare), nil
				},
			}
			hs := newHarness(t, h, nil)
			hs.handshake()
			id := uint32(1)
			// Sequential requests reuse one stream, and its Context.
			for range 5 {
				hs.send(frame.AppendHeaders(nil, id, true, true, hs.get("/")))
				if r := hs.response(id); r.status != "200" {
					t.Fatalf("status %q", r.status)
				}
				id += 2
			}
			hs.settle()
			mu.Lock()
			if made != 1 || reused != 4 {
				t.Errorf("sequential: made %d, reused %d; want 1 and 4", made, reused)
			}
			mu.Unlock()
			// A burst of maxSpares+8 streams: on workers they are in flight
			// together, and once they are all answered only maxSpares keep their
			// Context; inline, each is answered and recycled before the next
			// starts, and one Context serves them all.
			n := maxSpares + 8
			var b []byte
			first := id
			for range n {
				b = append(b, frame.AppendHeaders(nil, id, true, true, hs.get("/"))...)
				id += 2
			}
			hs.send(b)
			if inline {
				for sid := first; sid < id; sid += 2 {
					if r := hs.response(sid); r.status != "200" {
						t.Fatalf("stream %d: status %q", sid, r.status)
					}
				}
			} else {
				hs.awaitEnds(n) // workers answer in any order
			}
			hs.settle()
			mu.Lock()
			live := made - recycled
			mu.Unlock()
			want := maxSpares
			if inline {
				want = 1
			}
			if live != want || hs.c.spares != want {
				t.Errorf("after a burst of %d: %d Contexts kept (c.spares %d), want %d", n, live, hs.c.spares, want)
			}
			hs.c.OnClose(nil)
			mu.Lock()
			defer mu.Unlock()
			if made != recycled {
				t.Errorf("after close: %d made, %d recycled", made, recycled)
			}
		})
	}
}
