package stdengine

import (
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// Every transition of a direct run's state, from every phase, for its own run
// and another's.
func TestDirectStateTransitions(t *testing.T) {
	st := func(run, phase uint64) directState { return directState(run<<2 | phase) }
	const idle, running, moved = directIdle, directRunning, directMoved
	type result struct {
		to directState
		ok bool
	}
	for _, tc := range []struct {
		name string
		got  result
		want result
	}{
		// next: the owner starts a run, whatever the last one's phase.
		{"next from idle", result{st(3, idle).next(), true}, result{st(4, running), true}},
		{"next from moved", result{st(3, moved).next(), true}, result{st(4, running), true}},
		{"next from zero", result{directState(0).next(), true}, result{st(1, running), true}},
		// ended: the handler returned on its goroutine, not detached.
		{"ended running", res(st(4, running).ended(4)), result{st(4, idle), true}},
		{"ended other run", res(st(5, running).ended(4)), result{st(5, running), false}},
		{"ended moved", res(st(4, moved).ended(4)), result{st(4, moved), false}},
		{"ended idle", res(st(4, idle).ended(4)), result{st(4, idle), false}},
		// moved: Detach or the watch.
		{"moved running", res(st(4, running).moved()), result{st(4, moved), true}},
		{"moved twice", res(st(4, moved).moved()), result{st(4, moved), false}},
		{"moved idle", res(st(4, idle).moved()), result{st(4, idle), false}},
		// released: the goroutine a detached run left returns.
		{"released own", res(st(4, moved).released(4)), result{st(4, idle), true}},
		{"released after next run began", res(st(5, running).released(4)), result{st(5, running), false}},
		{"released after next run ended", res(st(5, idle).released(4)), result{st(5, idle), false}},
		{"released running", res(st(4, running).released(4)), result{st(4, running), false}},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// stale: the watch detaches only a run it saw running, the same one, at
	// the previous tick.
	for _, tc := range []struct {
		name      string
		now, seen directState
		want      bool
	}{
		{"same run, running both ticks", st(4, running), st(4, running), true},
		{"new run since", st(5, running), st(4, running), false},
		{"not seen running", st(4, running), st(4, idle), false},
		{"ended", st(4, idle), st(4, running), false},
		{"moved", st(4, moved), st(4, moved), false},
		{"never seen", st(1, running), 0, false},
	} {
		if got := tc.now.stale(tc.seen); got != tc.want {
			t.Errorf("stale %s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func res(to directState, ok bool) struct {
	to directState
	ok bool
} {
	return struct {
		to directState
		ok bool
	}{to, ok}
}

// An input that fails together with a direct run that detaches is not dropped:
// the handler's answer is written, then the connection closes with the input's
// error (the new owner reads nothing more).
func TestDirectRunDetachedKeepsInputError(t *testing.T) {
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
				dr.Detach()                         // as a handler that flushes early does
				testkit.Slow(20 * time.Millisecond) // a handler that answers later on purpose, after its Detach
				mu.Lock()
				answer = []byte("answer")
				mu.Unlock()
				c.Wake()
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
