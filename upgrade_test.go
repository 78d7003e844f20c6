//go:build linux

package celeris_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/testkit"
	"golang.org/x/net/http2"
)

// loader sends GETs over HTTP/1.1 keep-alive, h2c and HTTP/2 over TLS until
// stopped, counting the requests, the failures and the connections that could
// not be opened.
type loader struct {
	ok, failed, dialFailed atomic.Int64
	resets                 atomic.Int64 // connections reset by the server (seen by a read or write)
	mu                     sync.Mutex
	pids                   map[int]int // answers by process
	errs                   []string
	stop                   chan struct{}
	wg                     sync.WaitGroup
}

func (l *loader) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, network, addr)
	if err != nil {
		l.dialFailed.Add(1)
		l.note("dial: " + err.Error())
		return nil, err
	}
	return &resetConn{Conn: c, l: l}, nil
}

// resetConn counts the resets its reads and writes meet, which a client's
// retry would otherwise hide.
type resetConn struct {
	net.Conn
	l *loader
}

func (c *resetConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.check(err)
	return n, err
}

func (c *resetConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.check(err)
	return n, err
}

func (c *resetConn) check(err error) {
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		c.l.resets.Add(1)
		c.l.note("reset: " + err.Error())
	}
}

func (l *loader) note(s string) {
	l.mu.Lock()
	if len(l.errs) < 20 {
		l.errs = append(l.errs, s)
	}
	l.mu.Unlock()
}

func startLoad(plain, tlsAddr string, per int) *loader {
	l := &loader{pids: map[int]int{}, stop: make(chan struct{})}
	h1 := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DialContext: l.dial, MaxIdleConnsPerHost: per}}
	h2c := &http.Client{Timeout: 20 * time.Second, Transport: &http2.Transport{
		AllowHTTP: true,
		DialTLSContext: func(ctx context.Context, n, a string, _ *tls.Config) (net.Conn, error) {
			return l.dial(ctx, n, a)
		},
	}}
	h2 := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		DialContext: l.dial, ForceAttemptHTTP2: true,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}}
	for _, c := range []struct {
		client *http.Client
		url    string
		proto  int
	}{{h1, "http://" + plain, 1}, {h2c, "http://" + plain, 2}, {h2, "https://" + tlsAddr, 2}} {
		for i := 0; i < per; i++ {
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				for n := 0; ; n++ {
					select {
					case <-l.stop:
						return
					default:
					}
					path := "/pid"
					if n%8 == 0 {
						path = "/slow?ms=50" // in flight while a drain begins
					}
					resp, err := c.client.Get(c.url + path)
					if err != nil {
						l.failed.Add(1)
						l.note(err.Error())
						continue
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					pid, perr := strconv.Atoi(string(b))
					if err != nil || perr != nil || resp.StatusCode != 200 || resp.ProtoMajor != c.proto {
						l.failed.Add(1)
						l.note(fmt.Sprintf("%s%s: %d %s %q %v", c.url, path, resp.StatusCode, resp.Proto, b, err))
						continue
					}
					l.ok.Add(1)
					l.mu.Lock()
					l.pids[pid]++
					l.mu.Unlock()
				}
			}()
		}
	}
	return l
}

// loadServed is how many of the load's requests each process answers before a
// test moves on: enough that every client and protocol met it.
const loadServed = 60

// wait waits until the process pid answered loadServed of the load's requests.
func (l *loader) wait(t *testing.T, pid int) {
	t.Helper()
	testkit.Wait(t, fmt.Sprintf("process %d to answer the load", pid), func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return l.pids[pid] >= loadServed
	})
}

func (l *loader) finish() {
	close(l.stop)
	l.wg.Wait()
}

// openWS opens a WebSocket on /ws with a raw handshake.
func openWS(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", addr)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("WebSocket handshake: %v %v", resp, err)
	}
	if br.Buffered() != 0 {
		t.Fatal("bytes after the 101")
	}
	return c
}

// wsCloseCode reads frames until a close frame and returns its code.
func wsCloseCode(c net.Conn, d time.Duration) (int, error) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	for {
		var h [2]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return 0, err
		}
		n := int(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(c, b[:]); err != nil {
				return 0, err
			}
			n = int(binary.BigEndian.Uint16(b[:]))
		case 127:
			return 0, errors.New("a frame too long for this test")
		}
		p := make([]byte, n)
		if _, err := io.ReadFull(c, p); err != nil {
			return 0, err
		}
		if h[0]&0x0f == 8 {
			// Answer the close (RFC 6455 §5.5.1), masked with a zero key.
			_, _ = c.Write([]byte{0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe9})
			if n < 2 {
				return 0, nil
			}
			return int(binary.BigEndian.Uint16(p)), nil
		}
	}
}

// TestUpgradeUnderLoad: a server process (the default engine, epoll on Linux,
// or gnet for plaintext; std for TLS) upgrades itself three times on SIGHUP while clients send requests over
// HTTP/1.1 keep-alive, h2c and HTTP/2 over TLS: no connection is refused or
// reset, no request fails, every old process exits after its drain, and a
// WebSocket open across an upgrade gets close 1001. Before that, a new process
// that exits before it serves leaves the old one serving, with the error
// logged.
func TestUpgradeUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	for _, engine := range []string{"", "gnet"} {
		name := engine
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) { upgradeUnderLoad(t, engine) })
	}
}

func upgradeUnderLoad(t *testing.T, engine string) {
	failFile := filepath.Join(t.TempDir(), "fail")
	h := startHelper(t, []string{"CELERIS_HELPER_ENGINE=" + engine, "CELERIS_HELPER_FAIL=" + failFile}, nil, false)
	cur := h.Next(20 * time.Second)
	plain, tlsAddr := cur.Values["addr"], cur.Values["tls"]

	l := startLoad(plain, tlsAddr, 2)
	defer func() {
		select {
		case <-l.stop:
		default:
			l.finish()
		}
	}()
	l.wait(t, cur.Pid) // the load runs before the first upgrade

	// A new process that exits before it serves: the old one goes on serving.
	if err := os.WriteFile(failFile, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(cur.Pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !testkit.Until(20*time.Second, func() bool { return strings.Contains(h.Stderr(), "upgrade failed") }) {
		t.Fatal("the failed upgrade was not reported")
	}
	if pid := getPid(t, insecure, "http://"+plain); pid != cur.Pid {
		t.Fatalf("after a failed upgrade %d answers, want %d", pid, cur.Pid)
	}
	if err := os.Remove(failFile); err != nil {
		t.Fatal(err)
	}

	ws := openWS(t, plain)
	defer ws.Close()
	// An HTTP/1.1 request in flight on a keep-alive connection when the
	// first upgrade drains its process: answered, with Connection: close.
	inflight := make(chan string, 1)
	go func() {
		c := &http.Client{Timeout: 20 * time.Second}
		resp, err := c.Get("http://" + plain + "/slow?hold=1&ms=100")
		if err != nil {
			inflight <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		inflight <- fmt.Sprintf("%d close=%v %s", resp.StatusCode, resp.Close, b)
	}()
	held := fmt.Sprintf("helper %d: /slow held", cur.Pid)
	testkit.Wait(t, "the held request", func() bool { return strings.Contains(h.Stderr(), held) })
	for i := range 3 {
		l.wait(t, cur.Pid) // each process serves the load before its upgrade
		if err := syscall.Kill(cur.Pid, syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		next := h.Next(20 * time.Second)
		if next.Pid == cur.Pid || next.Values["addr"] != plain || next.Values["tls"] != tlsAddr {
			t.Fatalf("upgrade %d: new process %+v, old %+v", i+1, next, cur)
		}
		if i == 0 {
			code, err := wsCloseCode(ws, 10*time.Second)
			if err != nil || code != 1001 {
				t.Fatalf("WebSocket across the upgrade: close code %d, %v; want 1001", code, err)
			}
			if got, want := <-inflight, fmt.Sprintf("200 close=true %d", cur.Pid); got != want {
				t.Fatalf("HTTP/1.1 request in flight across the upgrade: %s, want %s", got, want)
			}
		}
		celeristest.WaitGone(t, cur.Pid, 30*time.Second)
		cur = next
	}
	l.wait(t, cur.Pid) // the last process serves the load before it stops
	l.finish()
	l.mu.Lock()
	pids, errs := len(l.pids), l.errs
	l.mu.Unlock()
	t.Logf("%d requests answered by %d processes; %d failed; %d connections not opened, %d reset", l.ok.Load(), pids, l.failed.Load(), l.dialFailed.Load(), l.resets.Load())
	if l.failed.Load() != 0 || l.dialFailed.Load() != 0 || l.resets.Load() != 0 {
		t.Fatalf("failures: %q", errs)
	}
	if pids != 4 {
		t.Fatalf("requests answered by %d processes, want 4", pids)
	}
	if err := syscall.Kill(cur.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	celeristest.WaitGone(t, cur.Pid, 30*time.Second)
}

// TestUpgradeCancelledByShutdown: SIGTERM while an upgrade waits for a new
// process that does not serve yet stops that process too: the service was
// asked to stop, and no new process may outlive the old one.
func TestUpgradeCancelledByShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts server processes")
	}
	hangFile := filepath.Join(t.TempDir(), "hang")
	h := startHelper(t, []string{"CELERIS_HELPER_HANG=" + hangFile}, nil, false)
	cur := h.Next(20 * time.Second)
	if err := os.WriteFile(hangFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(cur.Pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	var child int
	testkit.Wait(t, "the new process", func() bool {
		before, _, ok := strings.Cut(h.Stderr(), ": hanging before it serves")
		if ok {
			child, _ = strconv.Atoi(before[strings.LastIndex(before, "helper ")+len("helper "):])
		}
		return child > 0
	})
	if err := syscall.Kill(cur.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	celeristest.WaitGone(t, cur.Pid, 30*time.Second)
	celeristest.WaitGone(t, child, 10*time.Second)
	if !strings.Contains(h.Stderr(), "cancelled by Shutdown") {
		t.Errorf("the cancelled upgrade was not reported:\n%s", h.Stderr())
	}
}
