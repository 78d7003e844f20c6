package stdengine

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// An input that fails together with a direct run is not dropped: the handler's
// answer is written, then the connection closes with the input's error
// (conncore.Core.Hold; nothing more is read), whether the run ends on the
// owner or detaches first.
func TestDirectRunKeepsInputError(t *testing.T) {
	for _, detach := range []bool{true, false} {
		name := "ends here"
		if detach {
			name = "detached"
		}
		t.Run(name, func(t *testing.T) { testDirectRunKeepsInputError(t, detach) })
	}
}

func testDirectRunKeepsInputError(t *testing.T, detach bool) {
	errBad := errors.New("malformed pipelined request")
	closed := make(chan error, 1)
	addr := start(t, Config{}, func(c httpmsg.Conn) *proto {
		var mu sync.Mutex
		var answer []byte
		p := &proto{c: c, closed: closed}
		p.data = func(p *proto, in []byte) (int, error) {
			p.busy.Store(true)
			dr := c.(httpmsg.DirectRunner)
			if !dr.RunDirect(fnTask(func() {
				if detach {
					dr.Detach()                         // as a handler that flushes early does
					testkit.Slow(20 * time.Millisecond) // a sleep: a handler that answers later, after its Detach
				}
				mu.Lock()
				answer = []byte("answer")
				mu.Unlock()
				if detach {
					c.Wake() // a detached run's final hand-off wakes the new owner
				}
			})) {
				t.Error("RunDirect refused")
			}
			return len(in), errBad
		}
		p.wake = func(p *proto) error {
			mu.Lock()
			defer mu.Unlock()
			if answer != nil {
				c.Write(answer)
				answer = nil
				p.busy.Store(false)
			}
			return nil
		}
		return p
	})
	nc := dial(t, addr, false)
	if _, err := nc.Write([]byte("GET / and then garbage")); err != nil {
		t.Fatal(err)
	}
	_ = nc.SetReadDeadline(time.Now().Add(3 * time.Second))
	got, err := io.ReadAll(nc)
	if string(got) != "answer" || err != nil {
		t.Fatalf("read %q, %v; want the answer, then the close", got, err)
	}
	select {
	case err := <-closed:
		if !errors.Is(err, errBad) {
			t.Fatalf("OnClose(%v), want the input's error", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("no OnClose")
	}
}

type fnTask func()

func (f fnTask) Run() { f() }

// The loop moving off a direct run runs the protocol's OnWake on the new
// owner (httpmsg.DirectRunner), while the run still blocks: by a Wake of the
// running connection, which detaches the run before it returns, and by the
// watch.
func TestDirectRunMoveWakesProtocol(t *testing.T) {
	for _, how := range []string{"wake", "watch"} {
		t.Run(how, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			var wakes atomic.Int32
			stillRunning := make(chan bool, 1)
			addr := start(t, Config{}, func(c httpmsg.Conn) *proto {
				p := &proto{c: c, closed: make(chan error, 1)}
				p.data = func(p *proto, in []byte) (int, error) {
					p.busy.Store(true)
					c.(httpmsg.DirectRunner).RunDirect(fnTask(func() {
						if how == "wake" {
							c.Wake()
							stillRunning <- c.(*conn).vars().Running()
						}
						<-release
					}))
					return len(in), nil
				}
				p.wake = func(*proto) error { wakes.Add(1); return nil }
				return p
			})
			nc := dial(t, addr, false)
			if _, err := nc.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			if how == "wake" && <-stillRunning {
				t.Fatal("a Wake from the direct run left it running: the loop waits for it")
			}
			testkit.Wait(t, "OnWake while the run blocks", func() bool { return wakes.Load() > 0 })
		})
	}
}
