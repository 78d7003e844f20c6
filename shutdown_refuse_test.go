//go:build linux

package celeris

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// TestShutdownRefusesNewConnections: once Shutdown began, a new connection is
// refused by the kernel (ECONNREFUSED, as after net/http closes its listener) while
// the request in flight on an open connection still gets its answer. Each
// listener layout of gnet: one loop, a main reactor that accepts for two loops, and
// one SO_REUSEPORT listener per loop (whose port 0 must be one port for all).
func TestShutdownRefusesNewConnections(t *testing.T) {
	for _, tc := range []struct {
		name  string
		loops int
		reuse bool
	}{
		{"one loop", 1, false},
		{"main reactor", 2, false},
		{"reuseport", 8, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs lockedBuffer
			s := New(Config{Addr: "127.0.0.1:0", EventLoops: tc.loops, ReusePort: tc.reuse,
				Engine: engineFor(t), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			release := make(chan struct{})
			started := make(chan struct{}, 16)
			s.GET("/hold", func(c *Context) error {
				started <- struct{}{}
				<-release
				return c.String(200, "held")
			})
			s.GET("/bench", func(c *Context) error { return c.String(200, "OK") })
			errc := runServer(t, s)
			addr := s.Addr().String()

			// Every loop takes connections on the reported port: with 4 loops
			// and 8 connections, round robin or the kernel's hash reach several.
			for i := 0; i < 8; i++ {
				if status, _ := rawGet(t, addr, "/bench"); status != 200 {
					t.Fatalf("before shutdown: %d", status)
				}
			}
			// With SO_REUSEPORT every gnet loop listens, all on the reported
			// port; the epoll and std engines listen once.
			want := 1
			if tc.reuse && engineFor(t) == EngineGnet {
				want = tc.loops
			}
			if n := listeners(t, s.Addr().(*net.TCPAddr).Port); n != want {
				t.Fatalf("%d sockets listen on the port, want %d", n, want)
			}
			held := dialRaw(t, addr)
			held.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n")
			<-started

			done := make(chan error, 1)
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				done <- s.Shutdown(ctx)
			}()
			refused := false
			refused = testkit.Until(5*time.Second, func() bool {
				c, err := net.DialTimeout("tcp", addr, time.Second)
				if err == nil {
					c.Close() // accepted before the listeners closed
				} else if errors.Is(err, syscall.ECONNREFUSED) {
					return true
				} else if !errors.Is(err, syscall.ECONNRESET) { // reset: queued as they closed
					t.Fatalf("dial during shutdown: %v, want ECONNREFUSED", err)
				}
				return false
			})
			if !refused {
				t.Fatal("new connections still accepted 5 s into the shutdown")
			}
			if n := listeners(t, s.Addr().(*net.TCPAddr).Port); n != 0 {
				t.Fatalf("%d sockets still listen on the port", n)
			}
			select {
			case err := <-done:
				t.Fatalf("shutdown returned %v with a request in flight", err)
			case <-time.After(100 * time.Millisecond):
			}
			close(release)
			resp := held.readResponse("GET")
			if resp.StatusCode != 200 || !resp.Close || bodyString(t, resp) != "held" {
				t.Fatalf("in-flight request: %d close=%v", resp.StatusCode, resp.Close)
			}
			if err := <-done; err != nil {
				t.Fatalf("shutdown: %v", err)
			}
			if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
				t.Fatalf("start: %v", err)
			}
			if strings.Contains(logs.String(), "level=ERROR") {
				t.Fatalf("errors logged:\n%s", logs.String())
			}
		})
	}
}

// TestShutdownLeavesOtherListeners: two servers share a port with SO_REUSEPORT
// (as in a rolling restart inside one process). Shutting one down closes its own
// listeners only; the other goes on taking connections on the port.
func TestShutdownLeavesOtherListeners(t *testing.T) {
	// gnet listens once per event loop; the epoll and std engines once.
	per := 1
	if engineFor(t) == EngineGnet {
		per = 2
	}
	s1 := New(Config{Addr: "127.0.0.1:0", EventLoops: 2, ReusePort: true, Engine: engineFor(t)})
	s1.GET("/who", func(c *Context) error { return c.String(200, "one") })
	errc1 := runServer(t, s1)
	port := s1.Addr().(*net.TCPAddr).Port
	s2, addr := startServerAt(t, Config{Addr: s1.Addr().String(), EventLoops: 2, ReusePort: true}, func(s *Server) {
		s.GET("/who", func(c *Context) error { return c.String(200, "two") })
	})
	if s2.Addr().(*net.TCPAddr).Port != port {
		t.Fatalf("second server on %v, want port %d", s2.Addr(), port)
	}
	if n := listeners(t, port); n != 2*per {
		t.Fatalf("%d sockets listen on the port, want %d", n, 2*per)
	}
	if err := s1.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc1; !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("start: %v", err)
	}
	if n := listeners(t, port); n != per {
		t.Fatalf("%d sockets listen on the port after the first server stopped, want %d", n, per)
	}
	for i := 0; i < 20; i++ {
		if status, body := rawGet(t, addr, "/who"); status != 200 || body != "two" {
			t.Fatalf("after the first server stopped: %d %q", status, body)
		}
	}
}

// TestRestartOnSamePort: a server that closed connections itself leaves them in
// TIME_WAIT on its port for a minute; a new server (a restart) must still bind it,
// as with net/http (SO_REUSEADDR).
func TestRestartOnSamePort(t *testing.T) {
	s1 := New(Config{Addr: "127.0.0.1:0", EventLoops: 1})
	s1.GET("/bench", func(c *Context) error { return c.String(200, "OK") })
	errc := runServer(t, s1)
	addr := s1.Addr().String()
	for i := 0; i < 5; i++ {
		r := dialRaw(t, addr)
		r.send("GET /bench HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		if resp := r.readResponse("GET"); resp.StatusCode != 200 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		r.expectClosed() // the server closed first: its side is in TIME_WAIT
	}
	if err := s1.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-errc
	_, addr2 := startServerAt(t, Config{Addr: addr, EventLoops: 1}, func(s *Server) {
		s.GET("/bench", func(c *Context) error { return c.String(200, "again") })
	})
	if _, body := rawGet(t, addr2, "/bench"); body != "again" {
		t.Fatal("restarted server did not answer")
	}
}

// listeners counts this process's TCP sockets listening on port.
func listeners(t *testing.T, port int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ent := range ents {
		fd, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		if v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || v != 1 {
			continue
		}
		switch sa, _ := unix.Getsockname(fd); a := sa.(type) {
		case *unix.SockaddrInet4:
			if a.Port == port {
				n++
			}
		case *unix.SockaddrInet6:
			if a.Port == port {
				n++
			}
		}
	}
	return n
}

// TestShutdownUnderConnectionChurn: clients keep connecting while the server shuts
// down. The listeners close while gnet may be about to accept; no loop may stop on
// an accept error (the engine would drop the requests in flight), every request in
// flight completes, every connection the server did accept gets an answer or a
// close, and nothing is logged as an error.
func TestShutdownUnderConnectionChurn(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reuseport=%v", reuse), func(t *testing.T) {
			var logs lockedBuffer
			s := New(Config{Addr: "127.0.0.1:0", EventLoops: 2, ReusePort: reuse,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			var inFlight atomic.Int32
			release := make(chan struct{}) // the slow requests answer once the churn met the drain
			var releaseOnce sync.Once
			free := func() { releaseOnce.Do(func() { close(release) }) }
			defer free()
			s.GET("/slow", func(c *Context) error {
				inFlight.Add(1)
				<-release
				return c.String(200, "slow")
			})
			s.GET("/bench", func(c *Context) error { return c.String(200, "OK") })
			errc := runServer(t, s)
			addr := s.Addr().String()

			const slow = 50
			var wg sync.WaitGroup
			slowErr := make(chan error, slow)
			for i := 0; i < slow; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					c, err := net.Dial("tcp", addr)
					if err != nil {
						slowErr <- err
						return
					}
					defer c.Close()
					_ = c.SetDeadline(time.Now().Add(10 * time.Second))
					_, _ = io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
					resp, err := http.ReadResponse(bufio.NewReader(c), nil)
					if err != nil {
						slowErr <- err
						return
					}
					b, _ := io.ReadAll(resp.Body)
					if resp.StatusCode != 200 || string(b) != "slow" {
						slowErr <- fmt.Errorf("%d %q", resp.StatusCode, b)
					}
				}()
			}
			testkit.Wait(t, "the slow requests in their handlers", func() bool { return inFlight.Load() >= slow })
			stop := make(chan struct{})
			var churn sync.WaitGroup
			var served, refused atomic.Int32
			for i := 0; i < 8; i++ {
				churn.Add(1)
				go func() {
					defer churn.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						c, err := net.DialTimeout("tcp", addr, time.Second)
						if err != nil {
							refused.Add(1)
							continue
						}
						_ = c.SetDeadline(time.Now().Add(5 * time.Second))
						_, _ = io.WriteString(c, "GET /bench HTTP/1.1\r\nHost: x\r\n\r\n")
						if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
							resp.Body.Close()
							served.Add(1)
						} else {
							var ne net.Error
							if errors.As(err, &ne) && ne.Timeout() {
								t.Errorf("accepted connection neither answered nor closed")
							}
						}
						c.Close()
					}
				}()
			}
			waitFor(t, "the churn to get answers", func() bool { return served.Load() > 0 })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			shutdown := make(chan error, 1)
			go func() { shutdown <- s.Shutdown(ctx) }()
			// The drain waits for the slow requests while the churn's dials are
			// refused; then they answer and the shutdown ends.
			testkit.Wait(t, "a dial refused during the drain", func() bool { return refused.Load() > 0 })
			free()
			serr := <-shutdown
			close(stop)
			churn.Wait()
			wg.Wait()
			close(slowErr)
			for err := range slowErr {
				t.Error("in-flight request:", err)
			}
			if serr != nil {
				t.Fatalf("shutdown: %v", serr)
			}
			if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
				t.Fatalf("start: %v", err)
			}
			if refused.Load() == 0 || served.Load() == 0 {
				t.Fatalf("churn: %d served, %d refused; want both", served.Load(), refused.Load())
			}
			if strings.Contains(logs.String(), "level=ERROR") {
				t.Fatalf("errors logged:\n%s", logs.String())
			}
		})
	}
}
