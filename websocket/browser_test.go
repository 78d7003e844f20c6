package websocket_test

import (
	"context"
	"crypto/tls"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/selfcert"
	"github.com/celeris-dev/celeris/websocket"
)

const browserPage = `<!doctype html><meta charset="utf-8"><title>ws</title><b id="r">waiting</b>
<script>
const ws = new WebSocket("wss://" + location.host + "/ws");
ws.onopen = () => ws.send("ping over " + performance.getEntriesByType("navigation")[0].nextHopProtocol);
ws.onmessage = (e) => { document.getElementById("r").textContent = "echo:" + e.data; ws.close(1000); };
ws.onerror = () => { document.getElementById("r").textContent = "error"; };
</script>`

// TestChromiumWebSocketOverHTTP2: headless Chromium loads a page over TLS (h2 by
// ALPN) whose script opens a WebSocket to the same origin. Chromium then uses RFC
// 8441 on its h2 connection: the server sees the WebSocket as an HTTP/2 extended
// CONNECT, served by the same handler as over HTTP/1.1.
func TestChromiumWebSocketOverHTTP2(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var protos []string
	s, _ := celeristest.Serve(t, celeris.Config{Engine: testEngine, TLSAddr: "127.0.0.1:0", TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}}, func(s *celeris.Server) {
		s.GET("/", func(c *celeris.Context) error { return c.HTML(200, browserPage) })
		s.GET("/ws", func(c *celeris.Context) error {
			mu.Lock()
			protos = append(protos, c.Proto()+" "+c.Method())
			mu.Unlock()
			return websocket.UpgradeEvents(c, nil, websocket.Callbacks{OnMessage: func(c *websocket.Conn, mt websocket.MessageType, msg []byte) error {
				return c.WriteMessage(mt, msg)
			}})
		})
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out []byte
	// Headless Chromium's virtual time can run out before a loaded machine
	// delivers the echo (the page still says "waiting"): load it again then,
	// up to three times; any other answer is final.
	for try := 0; try < 3; try++ {
		var err error
		out, err = exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
			"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--ignore-certificate-errors", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=8000",
			"--dump-dom", "https://"+s.TLSAddr().String()+"/").Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		if !strings.Contains(string(out), `<b id="r">waiting</b>`) {
			break
		}
	}
	if !strings.Contains(string(out), `<b id="r">echo:ping over h2</b>`) {
		t.Fatalf("the page did not get its echo over h2: %s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(protos) == 0 || slices.ContainsFunc(protos, func(p string) bool { return p != "HTTP/2.0 CONNECT" }) {
		t.Fatalf("the WebSocket came as %q, want HTTP/2.0 CONNECT (RFC 8441) for each page load", protos)
	}
}
