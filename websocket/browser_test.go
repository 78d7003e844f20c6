package websocket_test

import (
	"crypto/tls"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/browsertest"
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

// browserResult reads #r of browserPage ("" before the document exists).
const browserResult = `(() => { const e = document.getElementById("r"); return e ? e.textContent : ""; })()`

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
// that Chromium's WebSocket got its echo and came as want ("proto method"):
// the test reads the page's #r over the DevTools protocol until the script
// has settled it, for up to a minute.
func chromiumWebSocket(t *testing.T, cfg celeris.Config, mark bool, want string) {
	chromium := browsertest.Chromium(t)
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
	b := browsertest.Start(t, chromium, "--disable-quic", "--ignore-certificate-errors")
	deadline := time.Now().Add(60 * time.Second)
	p, err := b.Open(deadline, "https://"+s.TLSAddr().String()+"/")
	if err != nil {
		t.Fatal(err)
	}
	// #r says "waiting" until the script settles: "echo:..." or "error".
	got, err := p.Poll(deadline, browserResult, func(v string) (bool, error) { return v != "" && v != "waiting", nil })
	if err != nil {
		t.Fatal(err)
	}
	if got != "echo:ping over h2" {
		t.Fatalf("the page did not get its echo over h2: it says %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(protos) == 0 || slices.ContainsFunc(protos, func(p string) bool { return p != want }) {
		t.Fatalf("the WebSocket came as %q, want %s for each page load", protos, want)
	}
}
