package demo

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/ws"
)

// The memory tests run the demo in a child process (this test binary, re-executed),
// so that the RSS they read is the server's alone.

const envServe = "CELERIS_DEMO_CHILD"

// TestMain serves the demo when run as the child.
func TestMain(m *testing.M) {
	if os.Getenv(envServe) != "" {
		s := childServer() // the demo; with TLS under envServeTLS (tlsmem_test.go)
		go func() {
			<-s.Ready()
			if a := s.TLSAddr(); a != nil {
				fmt.Println("TLSADDR", a.String())
			}
			fmt.Println("ADDR", s.Addr().String())
		}()
		if err := s.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// child is the demo served by a child process.
type child struct {
	addr    string
	tlsAddr string // with envServeTLS
	pid     int
}

// startChild starts the child with env added to this process's environment.
func startChild(t *testing.T, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), envServe+"=1"), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	tlsAddr := ""
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "TLSADDR "); ok {
			tlsAddr = a
		}
		if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return &child{addr: a, tlsAddr: tlsAddr, pid: cmd.Process.Pid}
		}
	}
	t.Fatal("the child server did not start")
	return nil
}

// rss is the child's resident set size in bytes.
func (c *child) rss(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(c.pid) + "/status")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// settle lets d pass in the child before its RSS or descriptors are read:
// what it frees or allocates reaches RSS later, and neither has an event to
// wait for (a test that samples RSS over a time calls it between samples).
func (c *child) settle(d time.Duration) {
	time.Sleep(d) // a sleep: RSS follows the heap with no event; the only wait is a time
}

// wsDial opens a WebSocket to /ws/echo on a raw connection.
func wsDial(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = nc.SetDeadline(time.Now().Add(60 * time.Second))
	_, err = io.WriteString(nc, "GET /ws/echo HTTP/1.1\r\nHost: "+addr+"\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReaderSize(nc, 512)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("handshake: %v %v", resp, err)
	}
	return nc, br
}

func wsFrame(op ws.Opcode, p []byte) []byte {
	key := [4]byte{7, 7, 7, 7}
	b := ws.AppendHeader(nil, true, false, op, len(p), true, key)
	start := len(b)
	b = append(b, p...)
	ws.Mask(key, 0, b[start:])
	return b
}

// TestWebSocketIdleMemory: 10,000 idle WebSocket connections (each echoed one
// message, then silent) cost the server less than 150 MB of RSS in all: an idle
// connection holds its buffers, no goroutine.
func TestWebSocketIdleMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("RSS bounds mean nothing under the race detector")
	}
	if testing.Short() {
		t.Skip("10k connections")
	}
	const n = 10000
	srv := startChild(t)
	srv.settle(200 * time.Millisecond) // the child settles before its baseline RSS is read; RSS has no event
	base := srv.rss(t)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	msg := wsFrame(ws.OpText, []byte("hello"))
	for i := 0; i < n; i++ {
		nc, br := wsDial(t, srv.addr)
		conns = append(conns, nc)
		if _, err := nc.Write(msg); err != nil {
			t.Fatal(err)
		}
		var h ws.Header
		hb, _ := br.Peek(2)
		if _, err := ws.ParseHeader(hb, &h, false, false); err != nil || h.Op != ws.OpText {
			t.Fatalf("connection %d: echo header %v %v", i, h, err)
		}
		if _, err := br.Discard(2 + int(h.Length)); err != nil {
			t.Fatal(err)
		}
	}
	srv.settle(500 * time.Millisecond) // the server's memory settles after the burst before RSS is read
	grown := srv.rss(t) - base
	t.Logf("%d idle WebSocket connections: server RSS %d MB -> %d MB (+%d KB per connection)", n, base>>20, (base+grown)>>20, grown/n>>10)
	if grown > 150<<20 {
		t.Fatalf("RSS grew by %d MB for %d idle connections, want < 150 MB", grown>>20, n)
	}
}

// TestWebSocketClientNeverReads: a client that sends 256 MiB of echo requests
// (and pings) without reading a byte does not grow the server's memory: the server
// stops reading it once 4 MiB of answers wait (TCP pushes back).
func TestWebSocketClientNeverReads(t *testing.T) {
	if raceEnabled {
		t.Skip("RSS bounds mean nothing under the race detector")
	}
	srv := startChild(t)
	nc, _ := wsDial(t, srv.addr)
	defer nc.Close()
	srv.settle(200 * time.Millisecond) // the child settles before its baseline RSS is read; RSS has no event
	base := srv.rss(t)
	for _, tc := range []struct {
		name  string
		frame []byte
	}{
		{name: "16 KiB messages", frame: wsFrame(ws.OpBinary, make([]byte, 16<<10))},
		{name: "pings", frame: wsFrame(ws.OpPing, make([]byte, 125))},
	} {
		batch := make([]byte, 0, 1<<20)
		for len(batch)+len(tc.frame) <= cap(batch) {
			batch = append(batch, tc.frame...)
		}
		sent := 0
		for sent < 256<<20 {
			_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
			k, err := nc.Write(batch)
			sent += k
			if err != nil {
				break // the server stopped reading: back-pressure
			}
		}
		grown := srv.rss(t) - base
		t.Logf("%s: the client got %d MiB out before the server stopped reading; server RSS +%d MB", tc.name, sent>>20, grown>>20)
		if sent >= 256<<20 {
			t.Fatalf("%s: the server read all 256 MiB of a client that never reads", tc.name)
		}
		if grown > 32<<20 {
			t.Fatalf("%s: server RSS grew by %d MB", tc.name, grown>>20)
		}
	}
}

// TestPipelinedClientNeverReads: the same over HTTP/1.1: a client that pipelines
// requests for 1 MiB answers and never reads them gets its input left unread once
// 4 MiB of answers wait, and the server stops reading its socket (before, gnet
// went on reading the requests into its buffer, without bound, while output was
// pending).
func TestPipelinedClientNeverReads(t *testing.T) {
	if raceEnabled {
		t.Skip("RSS bounds mean nothing under the race detector")
	}
	srv := startChild(t)
	nc, err := net.Dial("tcp", srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	srv.settle(200 * time.Millisecond) // the child settles before its baseline RSS is read; RSS has no event
	base := srv.rss(t)
	req := "GET /download?size=1048576 HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 4000) + "\r\n\r\n"
	batch := []byte(strings.Repeat(req, 256))
	sent := 0
	for sent < 256<<20 {
		_ = nc.SetWriteDeadline(time.Now().Add(time.Second))
		k, err := nc.Write(batch)
		sent += k
		if err != nil {
			break
		}
	}
	grown := srv.rss(t) - base
	t.Logf("the client got %d MiB of requests out before the server stopped reading; server RSS +%d MB", sent>>20, grown>>20)
	if sent >= 256<<20 || grown > 96<<20 {
		t.Fatalf("the server read %d MiB of pipelined requests (RSS +%d MB) from a client that never reads", sent>>20, grown>>20)
	}
}
