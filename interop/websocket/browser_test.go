package websocket

import (
	"context"
	"crypto/tls"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/selfcert"
)

// browserPage opens a WebSocket to the path in the query and shows the echo.
const browserPage = `<!doctype html><meta charset="utf-8"><title>ws</title><b id="r">waiting</b>
<script>
const ws = new WebSocket("wss://" + location.host + location.search.slice(1));
ws.onopen = () => ws.send("hi");
ws.onmessage = (e) => { document.getElementById("r").textContent = "echo:" + e.data; ws.close(1000); };
ws.onerror = () => { document.getElementById("r").textContent = "error"; };
</script>`

// TestChromiumAdaptedLibraries: headless Chromium on an h2 (TLS) connection opens
// WebSockets to gorilla/websocket and coder/websocket mounted with Adapt. They
// take over HTTP/1.1 connections and cannot serve RFC 8441's extended CONNECT:
// the server advertises SETTINGS_ENABLE_CONNECT_PROTOCOL only when a native
// websocket route serves it, and Config.DisableExtendedConnect turns it off when
// native routes sit beside adapted ones, so the browser falls back to HTTP/1.1
// and the libraries answer.
func TestChromiumAdaptedLibraries(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	cert, err := selfcert.New("localhost", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		cfg      celeris.Config
		register func(s *celeris.Server)
	}{
		{name: "adapted only", register: func(s *celeris.Server) {
			s.GET("/gorilla", celeris.AdaptFunc(gorillaEcho))
			s.GET("/coder", celeris.AdaptFunc(coderEcho))
		}},
		{name: "beside native, DisableExtendedConnect", cfg: celeris.Config{DisableExtendedConnect: true}, register: routes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.TLSAddr = "127.0.0.1:0"
			cfg.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
			s, _ := celeristest.Serve(t, cfg, func(s *celeris.Server) {
				s.GET("/", func(c *celeris.Context) error { return c.HTML(200, browserPage) })
				tc.register(s)
			})
			for _, path := range []string{"/gorilla", "/coder"} {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				var out []byte
				for try := 0; try < 3; try++ { // virtual time may run out on a loaded machine
					out, err = exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
						"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
						"--ignore-certificate-errors", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=8000",
						"--dump-dom", "https://"+s.TLSAddr().String()+"/?"+path).Output()
					if err != nil || !strings.Contains(string(out), `<b id="r">waiting</b>`) {
						break
					}
				}
				cancel()
				if err != nil {
					t.Fatalf("chromium: %v", err)
				}
				if !strings.Contains(string(out), `<b id="r">echo:hi</b>`) {
					t.Fatalf("%s: the page did not get its echo: %s", path, out)
				}
			}
		})
	}
}
