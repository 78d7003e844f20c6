// Package testkit synchronises tests with what they wait for: a condition, a
// log line, a listening port, the goroutine count. A test waits for the event
// itself rather than sleeping for a time that stands for it, so it neither
// fails on a slow machine nor wastes time on a fast one.
//
// Each Wait polls every Poll until its condition holds and fails the test
// (t.Fatalf) with what it waited for when Timeout passes first.
package testkit

import (
	"bytes"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Timeout bounds every wait: far above what a loaded CI machine needs, so that
// only a real failure reaches it.
const Timeout = 10 * time.Second

// Poll is the period of the checks.
const Poll = 2 * time.Millisecond

// Until polls cond until it returns true, or timeout passes: it reports
// whether cond held. For a wait whose end is not a failure.
func Until(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(Poll)
	}
	return true
}

// Wait polls cond until it returns true; after Timeout it fails t with
// "timed out waiting for " + what.
func Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Until(Timeout, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Slow takes d on purpose: the slowness is the behaviour under test (a route
// that takes time, a reader that falls behind, writes paced so that each
// leaves in a segment or frame of its own, a phase of load that lasts). A call
// says why on its line, in a comment "// a sleep: why"; internal/treecheck
// counts the calls with time.Sleep's and bounds their number.
func Slow(d time.Duration) { time.Sleep(d) }

// Window holds the test for d, a span of time that is itself the check:
// nothing may happen in it (a handler stays blocked, no timer fires, the heap
// does not grow), or what happens in it is measured. No event marks "not
// yet", so the span is a time. A call says what it checks on its line, in a
// comment "// a sleep: why", and counts as Slow's do.
func Window(d time.Duration) { time.Sleep(d) }

// Port waits until addr accepts a TCP connection.
func Port(t testing.TB, addr string) {
	t.Helper()
	Wait(t, "a listener on "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
}

// Goroutines waits until at most n goroutines run (what a test started has
// ended), and returns the count.
func Goroutines(t testing.TB, n int) int {
	t.Helper()
	var got int
	if !Until(Timeout, func() bool { got = runtime.NumGoroutine(); return got <= n }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, want at most %d:\n%s", got, n, buf[:runtime.Stack(buf, true)])
	}
	return got
}

// Parked returns a condition for Until or Wait: that some goroutine whose
// stack holds every one of frames (substrings of its trace: a function's name,
// a method such as ").Read(") is parked, blocked on a channel, a lock, a
// condition or the network, not running. A test waits for it before it acts on
// a goroutine it means to find blocked in a call.
func Parked(frames ...string) func() bool {
	return func() bool {
		buf := make([]byte, 1<<20)
		for {
			n := runtime.Stack(buf, true)
			if n < len(buf) {
				buf = buf[:n]
				break
			}
			buf = make([]byte, 2*len(buf))
		}
	next:
		for _, g := range strings.Split(string(buf), "\n\n") {
			head, _, _ := strings.Cut(g, "\n")
			if strings.Contains(head, "[running") || strings.Contains(head, "[runnable") || strings.Contains(head, "[syscall") {
				continue
			}
			for _, f := range frames {
				if !strings.Contains(g, f) {
					continue next
				}
			}
			return true
		}
		return false
	}
}

// Log is an io.Writer that keeps what is written to it, safe for concurrent
// use: a slog handler's or log.Logger's output that a test waits for.
type Log struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Reset drops everything written so far.
func (l *Log) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Reset()
}

// Count returns how many times s was written so far.
func (l *Log) Count(s string) int { return strings.Count(l.String(), s) }

// Wait waits until s was written.
func (l *Log) Wait(t testing.TB, s string) {
	t.Helper()
	Wait(t, "the log line "+s, func() bool { return strings.Contains(l.String(), s) })
}
