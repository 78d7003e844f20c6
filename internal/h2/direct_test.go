package h2

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// directConn is a fakeConn whose engine runs handlers in place
// (httpmsg.DirectRunner) as the engines do: the run the Conn asks for in a
// callback runs once the callback returned while the owner (the test) waits;
// Detach, a Wake during the run, or a run longer than the engine's watch lets
// the owner go on while the run ends elsewhere; after the run, OnWake (at
// once when undetached, by a wake-up when detached).
type directConn struct {
	*fakeConn
	task     httpmsg.Task // asked for in the current callback
	mu       sync.Mutex
	running  bool          // a run has not ended or been detached
	detached chan struct{} // closed by the run's detach
	runs     atomic.Int32
}

func (d *directConn) RunDirect(t httpmsg.Task) bool {
	if d.task != nil {
		return false
	}
	d.task = t
	return true
}

func (d *directConn) Detach() {
	d.mu.Lock()
	moved := d.running
	if moved {
		d.running = false
		close(d.detached)
	}
	d.mu.Unlock()
	if moved {
		d.fakeConn.Wake() // OnWake follows a move (httpmsg.DirectRunner)
	}
}

func (d *directConn) Wake() {
	d.Detach()
	d.fakeConn.Wake()
}

// runTask runs the task asked for, if any, as the engine does after a
// callback (owner only).
func (d *directConn) runTask(c *Conn) {
	t := d.task
	if t == nil {
		return
	}
	d.task = nil
	d.runs.Add(1)
	d.mu.Lock()
	d.running, d.detached = true, make(chan struct{})
	detached := d.detached
	d.mu.Unlock()
	done := make(chan struct{})
	go func() {
		t.Run()
		d.mu.Lock()
		undetached := d.running
		d.running = false
		d.mu.Unlock()
		if !undetached {
			d.fakeConn.Wake() // the run's wake-up
		}
		close(done)
	}()
	select {
	case <-done:
		d.mu.Lock()
		own := !isClosed(detached)
		d.mu.Unlock()
		if own {
			_ = c.OnWake()
		}
	case <-detached:
	case <-time.After(10 * time.Millisecond): // the engine's watch
		d.Detach()
	}
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// newDirectHarness is newHarness over a directConn.
func newDirectHarness(t *testing.T, h httpmsg.Handler, cfg *Config) (*harness, *directConn) {
	t.Helper()
	if cfg == nil {
		cfg = &Config{}
	}
	cfg.InPlace = true
	dc := &directConn{fakeConn: newFakeConn()}
	hs := newHarness(t, h, cfg)
	hs.c.OnClose(nil)
	hs.fc = dc.fakeConn
	hs.c = NewConn(dc, h, testPool, cfg)
	t.Cleanup(func() { hs.c.OnClose(nil) })
	return hs, dc
}

// sendDirect is hs.send followed by the engine's run of what OnData asked for.
func sendDirect(hs *harness, dc *directConn, b []byte) {
	hs.send(b)
	dc.runTask(hs.c)
}

// TestInPlaceAnswers: requests read at once are answered by one run in place.
func TestInPlaceAnswers(t *testing.T) {
	hs, dc := newDirectHarness(t, helloHandler(false), nil)
	hs.handshake()
	var b []byte
	for id := uint32(1); id <= 9; id += 2 {
		b = frame.AppendHeaders(b, id, true, true, hs.get("/"))
	}
	sendDirect(hs, dc, b)
	hs.awaitEnds(5)
	if n := dc.runs.Load(); n != 1 {
		t.Fatalf("%d runs, want 1", n)
	}
	if hs.c.handlers != 0 {
		t.Fatalf("%d handlers counted after every answer", hs.c.handlers)
	}
}

// TestInPlaceHandlerLimit: CVE-2023-44487, CVE-2025-8671. Handlers in place
// count against MaxHandlersPerConn with those on workers: with the first
// blocked in place, the second goes to a worker once the run moved, and no
// third starts before one returns.
func TestInPlaceHandlerLimit(t *testing.T) {
	release := make(chan struct{})
	var running, peak atomic.Int32
	hs, dc := newDirectHarness(t, blockingHandler(release, &running, &peak), &Config{MaxHandlersPerConn: 2})
	hs.handshake()
	var b []byte
	for id := uint32(1); id <= 19; id += 2 {
		b = frame.AppendHeaders(b, id, true, true, hs.get("/"))
	}
	sendDirect(hs, dc, b)
	// The run moved (the fake's watch), which wakes the Conn, and the stream
	// queued behind the blocked one goes to a worker.
	deadline := time.Now().Add(5 * time.Second)
	for running.Load() < 2 && time.Now().Before(deadline) {
		hs.next(10 * time.Millisecond)
	}
	testkit.Window(50 * time.Millisecond) // a sleep: the check is that no third handler starts, which has no event
	hs.next(10 * time.Millisecond)
	if n := running.Load(); n != 2 {
		t.Fatalf("%d handlers running, want 2", n)
	}
	if n := dc.runs.Load(); n != 1 {
		t.Fatalf("%d runs in place, want 1", n)
	}
	close(release)
	hs.awaitEnds(10)
	if p := peak.Load(); p != 2 {
		t.Fatalf("peak %d", p)
	}
}
