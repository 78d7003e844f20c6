package celeris

import (
	"context"
	"errors"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/epoll"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// TestEpollEngine runs engineTests on the epoll engine when the package runs on
// another (CELERIS_TEST_ENGINE=gnet or std).
func TestEpollEngine(t *testing.T) { runEngineTests(t, EngineEpoll) }

// TestGnetEngine runs engineTests on the gnet engine when the package runs on
// another (by default it runs on the epoll engine; CI also runs the whole
// package with CELERIS_TEST_ENGINE=gnet).
func TestGnetEngine(t *testing.T) { runEngineTests(t, EngineGnet) }

// runEngineTests runs engineTests on e, in parallel but for the serial ones,
// unless the whole package runs on e already (EngineAuto is EngineEpoll here).
func runEngineTests(t *testing.T, e Engine) {
	if testEngine == e || (testEngine == EngineAuto && e == EngineEpoll) {
		t.Skipf("the whole package runs on the %s engine already", e)
	}
	withEngine(t, e)
	for _, tc := range engineTests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.serial {
				t.Parallel()
			}
			tc.f(t)
		})
	}
}

// StartListener with EngineEpoll serves the caller's *net.TCPListener from the
// epoll loops, and Shutdown closes it.
func TestStartListenerEpoll(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(Config{Engine: EngineEpoll})
	s.GET("/hello", func(c *Context) error { return c.String(200, "hello "+c.Proto()) })
	errc := make(chan error, 1)
	go func() { errc <- s.StartListener(ln) }()
	select {
	case <-s.Ready():
	case err := <-errc:
		t.Fatal(err)
	}
	if _, ok := s.eng.(*epoll.Engine); !ok {
		t.Fatalf("served by %T, want the epoll engine", s.eng)
	}
	if status, body := rawGet(t, ln.Addr().String(), "/hello"); status != 200 || body != "hello HTTP/1.1" {
		t.Fatalf("%d %q", status, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("the listener still accepts after Shutdown")
	}
}

// A draining epoll engine whose listening socket is still open elsewhere (the
// socket systemd activated, the copy an upgraded process serves) does not
// spin: closing the engine's descriptor alone would leave the listener in the
// loops' epoll, level-triggered, reporting the connection queued in its
// backlog on every poll.
func TestEpollDrainListenerHeldElsewhere(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	held, err := ln.(*net.TCPListener).File() // another reference to the socket
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	release := make(chan struct{})
	s := New(Config{Engine: EngineEpoll, EventLoops: 2})
	s.GET("/slow", func(c *Context) error { <-release; return c.String(200, "ok") })
	errc := make(chan error, 1)
	go func() { errc <- s.StartListener(ln) }()
	select {
	case <-s.Ready():
	case err := <-errc:
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	slow, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	if _, err := slow.Write([]byte("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	stats := s.Stats
	testkit.Wait(t, "the slow request", func() bool { return stats().ActiveRequests == 1 })
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(context.Background()) }() // drains: waits for /slow
	testkit.Wait(t, "the drain", func() bool { return !s.eng.(*epoll.Engine).Listening() })
	queued, err := net.Dial("tcp", addr) // the kernel queues it in the held socket's backlog
	if err != nil {
		t.Fatal(err)
	}
	defer queued.Close()
	before := processCPU()
	time.Sleep(500 * time.Millisecond) // a sleep: the window in which a spinning loop would burn CPU
	if used := processCPU() - before; used > 200*time.Millisecond {
		t.Errorf("the process used %v of CPU in 500 ms of drain with a queued connection: a loop spins", used)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
