package demo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/browsertest"
)

// Real clients against the demo: Python's websockets, Node's ws and headless
// Chromium. Each is skipped when not installed here; .ci/run installs them.

func runClient(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestDemoWebSocketPython: Python's websockets library echoes text, binary, a
// large message and a ping through /ws/echo.
func TestDemoWebSocketPython(t *testing.T) {
	t.Parallel()
	if exec.Command("python3", "-c", "import websockets").Run() != nil {
		t.Skip("python3 with websockets not installed (pip install websockets)")
	}
	addr := strings.TrimPrefix(startDemo(t, false), "http://")
	out := runClient(t, nil, "python3", filepath.Join("testdata", "ws_client.py"), addr)
	if !strings.Contains(out, "python websockets: ok") {
		t.Fatalf("client said: %s", out)
	}
}

// TestDemoWebSocketNode: Node's ws library (CELERIS_NODE_PATH: a node_modules
// folder that holds it).
func TestDemoWebSocketNode(t *testing.T) {
	t.Parallel()
	nodePath := os.Getenv("CELERIS_NODE_PATH")
	if nodePath == "" || exec.Command("node", "--version").Run() != nil {
		t.Skip("node and CELERIS_NODE_PATH (a node_modules with ws) not set up")
	}
	addr := strings.TrimPrefix(startDemo(t, false), "http://")
	out := runClient(t, []string{"NODE_PATH=" + nodePath}, "node", filepath.Join("testdata", "ws_client.js"), addr)
	if !strings.Contains(out, "node ws: ok, close 1000") {
		t.Fatalf("client said: %s", out)
	}
}

// TestDemoBrowserPage: headless Chromium loads GET / and the page's own script
// reports that /ws/echo echoed its messages and /sse sent its five events: over
// plaintext HTTP/1.1, and over TLS, where the page says it was served over h2 and
// the WebSocket goes over the same h2 connection (RFC 8441). The test reads the
// page's status line over the DevTools protocol until the script has settled
// both, so it waits as long as a loaded machine needs (up to a minute per page).
func TestDemoBrowserPage(t *testing.T) {
	t.Parallel()
	chromium := browsertest.Chromium(t)
	plain, secure := startDemoTLS(t, options{})
	b := browsertest.Start(t, chromium, "--disable-quic", "--ignore-certificate-errors")
	const state = `(() => {
		const g = (id) => { const e = document.getElementById(id); return e ? e.textContent : ""; };
		return JSON.stringify({proto: g("proto"), ws: g("ws"), sse: g("sse"), log: g("log")});
	})()`
	for _, tc := range []struct{ url, proto string }{{url: plain, proto: "http/1.1"}, {url: secure, proto: "h2"}} {
		deadline := time.Now().Add(60 * time.Second)
		p, err := b.Open(deadline, tc.url+"/")
		if err != nil {
			t.Fatal(err)
		}
		var page struct{ Proto, WS, SSE, Log string }
		// "connecting" (or no element yet) until the script settles each one:
		// "ok", or an error it names.
		_, err = p.Poll(deadline, state, func(js string) (bool, error) {
			if err := json.Unmarshal([]byte(js), &page); err != nil {
				return false, fmt.Errorf("page state %q: %v", js, err)
			}
			return page.WS != "" && page.WS != "connecting" && page.SSE != "" && page.SSE != "connecting", nil
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.url, err)
		}
		if page.WS != "ok" || page.SSE != "ok" || page.Proto != tc.proto {
			t.Fatalf("%s: page says proto %q (want %q), ws %q, sse %q; log:\n%s", tc.url, page.Proto, tc.proto, page.WS, page.SSE, page.Log)
		}
	}
}
