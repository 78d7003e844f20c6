package demo

import (
	"bufio"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/testkit"
)

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	return len(ents)
}

// TestSlowWatchesContext: 200 clients ask for GET /slow?ms=10000 and close after
// 100 ms. /slow watches its request context, so the server lets go of every
// connection's descriptor when its client leaves, not when the 10 s wait ends:
// the process's open descriptors are back at their baseline within 5 s of the
// last close (half the wait, so a loaded machine does not fail it while a
// handler that ignores its context does). Over HTTP/1.1 and h2c.
func TestSlowWatchesContext(t *testing.T) {
	s := newServer("127.0.0.1:0", 2, false, false)
	addr := celeristest.Start(t, s)
	for _, proto := range []string{"h1", "h2c"} {
		t.Run(proto, func(t *testing.T) {
			testkit.Wait(t, "the previous run's connections to close", func() bool { return s.Stats().OpenConnections == 0 })
			baseline := openFDs(t)
			const clients = 200
			conns := make([]net.Conn, clients)
			var wg sync.WaitGroup
			for i := range conns {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				conns[i] = c
				wg.Add(1)
				go func() {
					defer wg.Done()
					sendSlow(t, c, proto)
				}()
			}
			wg.Wait()
			testkit.Wait(t, "the requests in their handlers", func() bool { return s.Stats().ActiveRequests >= clients })
			for _, c := range conns {
				_ = c.Close()
			}
			closed := time.Now()
			var n int
			if !testkit.Until(5*time.Second, func() bool { n = openFDs(t); return n <= baseline }) {
				t.Fatalf("%s: %d descriptors open 5 s after 200 clients left a 10 s /slow, baseline %d", proto, n, baseline)
			}
			t.Logf("%s: descriptors back at %d (baseline %d) %v after the clients closed", proto, n, baseline, time.Since(closed).Round(time.Millisecond))
		})
	}
}

// sendSlow writes a GET /slow?ms=10000 on c, over HTTP/1.1 or as one h2c stream
// (prior knowledge), and waits until the server has it (h2c: its SETTINGS).
func sendSlow(t *testing.T, c net.Conn, proto string) {
	if proto == "h1" {
		if _, err := c.Write([]byte("GET /slow?ms=10000 HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Error(err)
		}
		return
	}
	if _, err := c.Write([]byte(http2.ClientPreface)); err != nil {
		t.Error(err)
		return
	}
	fr := http2.NewFramer(c, bufio.NewReader(c))
	_ = fr.WriteSettings()
	var hb strings.Builder
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", "x"}, {":path", "/slow?ms=10000"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte(hb.String()), EndStream: true, EndHeaders: true}); err != nil {
		t.Error(err)
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := fr.ReadFrame(); err != nil { // the server's SETTINGS
		t.Error(err)
	}
}
