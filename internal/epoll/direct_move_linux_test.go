package epoll

import (
	"net"
	"sync/atomic"
	"testing"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/protoselect"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// runProto asks for a direct run of its task on the first input and counts
// its OnWakes.
type runProto struct {
	c     httpmsg.Conn
	task  func()
	asked bool
	wakes *atomic.Int32
}

func (p *runProto) OnData(in []byte) (int, error) {
	if !p.asked {
		p.asked = p.c.(httpmsg.DirectRunner).RunDirect(taskFunc(p.task))
	}
	return len(in), nil
}
func (p *runProto) OnWake() error { p.wakes.Add(1); return nil }
func (p *runProto) OnClose(error) {}
func (p *runProto) Busy() bool    { return true }

type taskFunc func()

func (f taskFunc) Run() { f() }

// The loop moving off a direct run runs the protocol's OnWake on the new
// owner (httpmsg.DirectRunner) while the run still blocks: by a Wake of the
// running connection, which detaches the run before it returns, and by the
// watch.
func TestDirectRunMoveWakesProtocol(t *testing.T) {
	for _, how := range []string{"wake", "watch"} {
		t.Run(how, func(t *testing.T) {
			release := make(chan struct{})
			var wakes atomic.Int32
			stillRunning := make(chan bool, 1)
			e := New(Config{Addr: "127.0.0.1:0", Loops: 1, Direct: true,
				Protocols: protoselect.Protocols{NewH1: func(c httpmsg.Conn) httpmsg.Proto {
					p := &runProto{c: c, wakes: &wakes}
					p.task = func() {
						if how == "wake" {
							c.Wake()
							stillRunning <- c.(*conn).l.dv.Running()
						}
						<-release
					}
					return p
				}}})
			a := serve(t, e)
			defer close(release) // before serve's stop: the run returns
			nc, err := net.Dial("tcp", a.String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
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
