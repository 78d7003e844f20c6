package engine

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/protoselect"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// hoardProto consumes nothing: every byte a client sends stays buffered, as when a
// handler does not read its upload or a worker holds a pipelined connection.
type hoardProto struct{}

func (hoardProto) OnData([]byte) (int, error) { return 0, nil }
func (hoardProto) OnWake() error              { return nil }
func (hoardProto) OnClose(error)              {}
func (hoardProto) Busy() bool                 { return true }

// TestGnetHooksActive fails when the gnet internals the engine reaches by reflection
// (pause.go: the poller and poll attachment for read back-pressure, the outbound
// buffer for detaching; unlisten_linux.go: the listeners for graceful shutdown) are
// not where gnet v2.10.0 keeps them. The engine would then refuse to run
// (CheckLayout); this test makes a gnet upgrade that moves them a red CI first.
// docs/ARCHITECTURE.md says what to do then.
func TestGnetHooksActive(t *testing.T) {
	e := startHoardEngine(t, 512<<10)
	c, err := net.Dial("tcp", e.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return e.OpenConnections() == 1 })
	if !pauseOK {
		t.Error("read back-pressure is unavailable: gnet's conn.loop.poller or conn.pollAttachment moved (pause.go)")
	}
	if !outboundOK {
		t.Error("detaching is unavailable: gnet's conn.outboundBuffer moved (pause.go, detach.go)")
	}
	if fds, ok := gnetListeners(e.eng); !ok || len(fds) == 0 {
		t.Errorf("graceful shutdown cannot close gnet's listeners: gnetListeners = %v, %v (unlisten_linux.go)", fds, ok)
	}
}

// TestReadBackPressure shows the effect over a socket: a client pushing 128 MiB at a
// connection whose protocol consumes nothing gets stopped by TCP flow control once
// the engine's MaxBufferedInput plus the kernel's socket buffers are full, instead
// of filling the server's memory.
func TestReadBackPressure(t *testing.T) {
	const limit = 512 << 10
	e := startHoardEngine(t, limit)
	c, err := net.Dial("tcp", e.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	chunk := make([]byte, 256<<10)
	sent := 0
	for sent < 128<<20 {
		_ = c.SetWriteDeadline(time.Now().Add(500 * time.Millisecond))
		n, err := c.Write(chunk)
		sent += n
		if errors.Is(err, os.ErrDeadlineExceeded) {
			break
		}
		if err != nil {
			t.Fatalf("write after %d bytes: %v", sent, err)
		}
	}
	// Loopback socket buffers take a few MiB at most (net.core.rmem_max and
	// wmem_max, autotuned); without back-pressure the whole 128 MiB is taken.
	t.Logf("the client could send %d KiB before the server stopped reading", sent>>10)
	if sent >= 32<<20 {
		t.Fatalf("the server took %d MiB from a connection that consumed nothing (limit %d KiB): read back-pressure is off", sent>>20, limit>>10)
	}
}

func startHoardEngine(t *testing.T, maxBuffered int) *Engine {
	t.Helper()
	e := New(Config{
		Addr:             "127.0.0.1:0",
		EventLoops:       1,
		MaxBufferedInput: maxBuffered,
		Protocols:        protoselect.Protocols{NewH1: func(httpmsg.Conn) httpmsg.Proto { return hoardProto{} }},
	})
	errc := make(chan error, 1)
	go func() { errc <- e.Run() }()
	if _, err := e.WaitReady(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
		<-errc
	})
	return e
}

// waitFor waits for cond (testkit.Wait).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	testkit.Wait(t, "the condition", cond)
}
