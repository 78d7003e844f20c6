package epoll

import (
	"context"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/celeris-dev/celeris/internal/httpmsg"
	"github.com/celeris-dev/celeris/internal/protoselect"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// Out of descriptors, accept fails while the connection stays in the backlog
// and the listener readable: the loop stops watching the listener for a
// while instead of spinning on it, and accepts again once descriptors are
// free.
func TestAcceptOutOfDescriptors(t *testing.T) {
	e := New(Config{Addr: "127.0.0.1:0", Loops: 1,
		Protocols: protoselect.Protocols{NewH1: func(c httpmsg.Conn) httpmsg.Proto { return okProto{c} }}})
	a := serve(t, e)
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Skip(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	low := lim
	low.Cur = uint64(len(fds) + 16)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &lim)
		}
	}
	defer restore()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 40 { // the server runs out before the client: each connection takes one of each
		c, err := net.DialTimeout("tcp", a.String(), time.Second)
		if err != nil {
			break
		}
		conns = append(conns, c)
	}
	var before, after unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &before)
	testkit.Window(400 * time.Millisecond) // a sleep: the window whose CPU use is measured
	_ = unix.Getrusage(unix.RUSAGE_SELF, &after)
	busy := time.Duration(after.Utime.Nano()+after.Stime.Nano()-before.Utime.Nano()-before.Stime.Nano()) * time.Nanosecond
	restore()
	t.Logf("%d connections dialed; CPU while out of descriptors: %v", len(conns), busy)
	if busy > 150*time.Millisecond {
		t.Fatalf("the process used %v of CPU in 400 ms while out of descriptors: the loop spins on the listener", busy)
	}
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	c, err := net.Dial("tcp", a.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 2)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "ok" {
		t.Fatalf("after descriptors were freed: %q, %v", b, err)
	}
}

// serve runs e until the test ends, when it stops it (within 5 s); it returns
// e's address.
func serve(t *testing.T, e *Engine) net.Addr {
	t.Helper()
	errc := make(chan error, 1)
	go func() { errc <- e.Run() }()
	a, err := e.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := e.Stop(ctx); err != nil {
			t.Error(err)
		}
		<-errc
	})
	return a
}
