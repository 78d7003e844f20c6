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
				testkit.Slow(20 * time.Millisecond) // a sleep: a handler that answers later, after its Detach
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
