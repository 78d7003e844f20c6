package celeris

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// shutdownEngines are the engines of this OS.
func shutdownEngines() []Engine {
	if gnetAvailable {
		return []Engine{EngineGnet, EngineStd}
	}
	return []Engine{EngineStd}
}

// An idle server shuts down in well under gnet's 500 ms stop poll.
func TestShutdownIdleIsQuick(t *testing.T) {
	for _, e := range shutdownEngines() {
		t.Run(string(e), func(t *testing.T) {
			s := New(Config{Addr: "127.0.0.1:0", Engine: e, EventLoops: 2})
			errc := runServer(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			start := time.Now()
			if err := s.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
				t.Fatalf("Start = %v", err)
			}
			t.Logf("shutdown took %v", took)
			if took > 200*time.Millisecond {
				t.Fatalf("an idle server took %v to shut down", took)
			}
		})
	}
}

// Shutdown returns by its context's deadline even when a handler ignores its
// cancelled context: an inline one holds its event loop (gnet) or connection
// goroutine (std), which then cannot stop, and Shutdown waited up to 5 s more
// for the engines; gnet's own stop poll added up to 500 ms to the worker case.
func TestShutdownHonoursDeadline(t *testing.T) {
	for _, e := range shutdownEngines() {
		for _, inline := range []bool{false, true} {
			name := string(e) + "/worker"
			if inline {
				name = string(e) + "/inline"
			}
			t.Run(name, func(t *testing.T) { testShutdownHonoursDeadline(t, e, inline) })
		}
	}
}

func testShutdownHonoursDeadline(t *testing.T, e Engine, inline bool) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	s := New(Config{Addr: "127.0.0.1:0", Engine: e, EventLoops: 2})
	r := s.GET("/stuck", func(c *Context) error {
		started <- struct{}{}
		select { // ignores c.Context()
		case <-release:
		case <-time.After(3 * time.Second):
		}
		return c.String(http.StatusOK, "late")
	})
	if inline {
		r.Inline()
	}
	errc := runServer(t, s)
	nc, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, "GET /stuck HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.Shutdown(ctx)
	took := time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown = %v, want the deadline", err)
	}
	t.Logf("shutdown took %v", took)
	// The handler holds on for 3 s: a Shutdown that waited for it, or for
	// a fixed grace of its own, would take that long. The bound leaves room
	// for a loaded machine's scheduling.
	if took > 1500*time.Millisecond {
		t.Fatalf("Shutdown returned %v after its 200 ms deadline", took-200*time.Millisecond)
	}
	close(release)
	select {
	case <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return once the handler did")
	}
}

// A Start that fails (the port is taken) stops the worker pool it started.
func TestFailedStartStopsPool(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, e := range shutdownEngines() {
		t.Run(string(e), func(t *testing.T) {
			s := New(Config{Addr: ln.Addr().String(), Engine: e})
			if err := s.Start(); err == nil || errors.Is(err, http.ErrServerClosed) {
				t.Fatalf("Start on a taken port = %v", err)
			}
			if s.pool.Submit(fnTask(func() {})) {
				t.Fatal("the worker pool still runs after a failed Start")
			}
		})
	}
}

type fnTask func()

func (f fnTask) Run() { f() }
