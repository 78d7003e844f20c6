//go:build !race

// The race detector's shadow memory grows with every goroutine, which makes
// RSS meaningless: .ci/run runs this file's test without -race.

package celerish3

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The defences' memory test: the server runs in a child process (this test
// binary again, TestDefenceServerProcess) so that the resident memory
// measured is the server's alone; the parent attacks it in rounds and checks
// that the RSS after the last round is close to the RSS after the first (a
// per-attack leak or an unbounded buffer grows it every round).

// TestDefenceServerProcess is the server half of TestDefencesMemoryFlat.
func TestDefenceServerProcess(t *testing.T) {
	if os.Getenv("CELERISH3_DEFENCE_SERVER") != "1" {
		t.Skip("child process of TestDefencesMemoryFlat")
	}
	addr, _ := wireServerH(t, Config{MaxConcurrentStreams: 100, MaxFieldSectionSize: 16 << 10})
	runtime.GC()
	debug.FreeOSMemory()
	fmt.Println("ADDR", addr)
	_, _ = io.Copy(io.Discard, os.Stdin) // serve until the parent closes stdin
}

// vmRSS reads VmRSS of process pid, in bytes.
func vmRSS(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skip("no /proc: ", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return kb << 10
		}
	}
	t.Skip("no VmRSS")
	return 0
}

// TestDefencesMemoryFlat: rounds of stream floods (rapid reset), control
// frame floods, QPACK dynamic-table references and encoder-stream inserts
// (each closing its connection) and oversized header sections (431) leave
// the server's RSS flat: the last of five rounds ends within a few MiB of
// the first.
func TestDefencesMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("memory test in a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDefenceServerProcess$")
	cmd.Env = append(os.Environ(), "CELERISH3_DEFENCE_SERVER=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	sc := bufio.NewScanner(stdout)
	addr := ""
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			addr = a
			break
		}
	}
	if addr == "" {
		t.Fatal("server process gave no address")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	pid := cmd.Process.Pid
	big := frameBytes(frameHeaders, block(":method", "GET", ":scheme", "https", ":path", "/", ":authority", "a",
		"x-big", string(bytes.Repeat([]byte{'a'}, 64<<10))))

	round := func(r int) {
		c := dialRaw(t, addr)
		c.control()
		if n := floodStreams(t, c, 5000, 8, 20*time.Second); n != 5000 {
			t.Fatalf("round %d: %d streams opened of 5000", r, n)
		}
		for i := 0; i < 20; i++ {
			if resp, err := requestUnread(c, big); err != nil || status(t, resp) != "431" {
				t.Fatalf("round %d: oversized header section: %q %v", r, resp, err)
			}
		}
		_ = c.qc.CloseWithError(0, "")

		c = dialRaw(t, addr)
		cs := c.control()
		for i := 0; i < 200; i++ {
			if _, err := cs.Write(controlFlood(i*1000, 1000)); err != nil {
				t.Fatal(err)
			}
		}
		if resp, err := c.request(getHeaders, true); err != nil || status(t, resp) != "200" {
			t.Fatalf("round %d: after the control flood: %q %v", r, resp, err)
		}
		_ = c.qc.CloseWithError(0, "")

		for i := 0; i < 10; i++ {
			c = dialRaw(t, addr)
			c.control()
			if i%2 == 0 {
				go func() { _, _ = c.request(frameBytes(frameHeaders, []byte{0x02, 0x00, 0x80}), true) }()
				if code := c.closedWith(); code != ErrCodeQPACKDecompressionFailed {
					t.Fatalf("round %d: closed with %v", r, code)
				}
			} else {
				c.uni([]byte{streamTypeQPACKEncoder, 0x41, 'a', 0x01, 'b'})
				if code := c.closedWith(); code != ErrCodeQPACKEncoderStream {
					t.Fatalf("round %d: closed with %v", r, code)
				}
			}
		}
	}
	start := time.Now()
	var first int64
	for r := 1; r <= 5; r++ {
		round(r)
		rss := vmRSS(t, pid)
		t.Logf("round %d: server RSS %.1f MiB", r, float64(rss)/(1<<20))
		if r == 1 {
			first = rss
		}
		if r == 5 && rss-first > 8<<20 {
			t.Fatalf("server RSS grew %.1f MiB from round 1 to round 5", float64(rss-first)/(1<<20))
		}
	}
	t.Logf("5 rounds in %v", time.Since(start).Round(time.Millisecond))
}

// requestUnread sends b on a new request stream and returns the response. The
// server may answer before it read the whole request and then stop the
// request's sending with H3_NO_ERROR (RFC 9114 §4.1.1): the write's error is
// not the request's outcome, the response is.
func requestUnread(c *rawClient, b []byte) ([]byte, error) {
	s, err := c.qc.OpenStreamSync(context.Background())
	if err != nil {
		return nil, err
	}
	_, _ = s.Write(b)
	_ = s.Close()
	_ = s.SetReadDeadline(time.Now().Add(5 * time.Second))
	return io.ReadAll(s)
}
