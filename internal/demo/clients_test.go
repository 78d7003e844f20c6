package demo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
// the WebSocket goes over the same h2 connection (RFC 8441).
func TestDemoBrowserPage(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	plain, secure := startDemoTLS(t, options{})
	for _, tc := range []struct{ url, proto string }{{url: plain, proto: "http/1.1"}, {url: secure, proto: "h2"}} {
		dom := runClient(t, nil, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
			"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--ignore-certificate-errors", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=10000", "--dump-dom", tc.url+"/")
		for _, want := range []string{`<b id="ws">ok</b>`, `<b id="sse">ok</b>`, `<b id="proto">` + tc.proto + `</b>`} {
			if !strings.Contains(dom, want) {
				log := regexp.MustCompile(`(?s)<pre id="log">.*?</pre>`).FindString(dom)
				t.Fatalf("%s: page lacks %s; status line and log:\n%s\n%s", tc.url, want, regexp.MustCompile(`Protocol of this page.*`).FindString(dom), log)
			}
		}
	}
}
