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
	chromiumWebSocket(t, celeris.Config{}, true, "HTTP/2.0 CONNECT")
}

// TestChromiumWebSocketFallback: with SETTINGS_ENABLE_CONNECT_PROTOCOL not
// advertised (Config.DisableExtendedConnect, or no route serving extended
// CONNECT), Chromium opens the WebSocket on an HTTP/1.1 connection of its own,
// the path a WebSocket library mounted with Adapt needs.
func TestChromiumWebSocketFallback(t *testing.T) {
	t.Run("DisableExtendedConnect", func(t *testing.T) {
		chromiumWebSocket(t, celeris.Config{DisableExtendedConnect: true}, true, "HTTP/1.1 GET")
	})
	t.Run("unmarked route", func(t *testing.T) {
		chromiumWebSocket(t, celeris.Config{}, false, "HTTP/1.1 GET")
	})
}

// chromiumWebSocket serves browserPage and /ws (an echo whose handler calls
// UpgradeEvents, marked with Route.ExtendedConnect when mark is set) and checks
// that Chromium's WebSocket got its echo and came as want ("proto method").
func chromiumWebSocket(t *testing.T, cfg celeris.Config, mark bool, want string) {
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
	cfg.Engine, cfg.TLSAddr = testEngine, "127.0.0.1:0"
	cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
	s, _ := celeristest.Serve(t, cfg, func(s *celeris.Server) {
		s.GET("/", func(c *celeris.Context) error { return c.HTML(200, browserPage) })
		r := s.GET("/ws", func(c *celeris.Context) error {
			mu.Lock()
			protos = append(protos, c.Proto()+" "+c.Method())
			mu.Unlock()
			return websocket.UpgradeEvents(c, nil, websocket.Callbacks{OnMessage: func(c *websocket.Conn, mt websocket.MessageType, msg []byte) error {
				return c.WriteMessage(mt, msg)
			}})
		})
		if mark {
			r.ExtendedConnect()
		}
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
	if len(protos) == 0 || slices.ContainsFunc(protos, func(p string) bool { return p != want }) {
		t.Fatalf("the WebSocket came as %q, want %s for each page load", protos, want)
	}
}
