package websocket

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/internal/browsertest"
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

// browserResult reads #r of browserPage ("" before the document exists).
const browserResult = `(() => { const e = document.getElementById("r"); return e ? e.textContent : ""; })()`

// TestChromiumAdaptedLibraries: headless Chromium on an h2 (TLS) connection opens
// WebSockets to gorilla/websocket and coder/websocket mounted with Adapt. They
// take over HTTP/1.1 connections and cannot serve RFC 8441's extended CONNECT:
// the server advertises SETTINGS_ENABLE_CONNECT_PROTOCOL only when a native
// websocket route serves it, and Config.DisableExtendedConnect turns it off when
// native routes sit beside adapted ones, so the browser falls back to HTTP/1.1
// and the libraries answer. The test reads each page's #r over the DevTools
// protocol until the script has settled it, for up to a minute.
func TestChromiumAdaptedLibraries(t *testing.T) {
	chromium := browsertest.Chromium(t)
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
				// A browser of its own per page, so each WebSocket starts
				// from a fresh h2 connection and its SETTINGS.
				b := browsertest.Start(t, chromium, "--disable-quic", "--ignore-certificate-errors")
				deadline := time.Now().Add(60 * time.Second)
				p, err := b.Open(deadline, "https://"+s.TLSAddr().String()+"/?"+path)
				if err != nil {
					t.Fatal(err)
				}
				// #r says "waiting" until the script settles: "echo:..." or "error".
				got, err := p.Poll(deadline, browserResult, func(v string) (bool, error) { return v != "" && v != "waiting", nil })
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				if got != "echo:hi" {
					t.Fatalf("%s: the page did not get its echo: it says %q", path, got)
				}
			}
		})
	}
}
