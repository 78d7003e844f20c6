package compress_test

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/celeris-dev/celeris"
	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/compress"
	mwcompress "github.com/celeris-dev/celeris/middleware/compress"
)

// TestChromiumDecodes: headless Chromium (which sends "gzip, deflate, br,
// zstd") gets a zstd, a br and a gzip answer, from routes whose middleware
// offers zstd first, br first and gzip only, and shows each decoded in its DOM.
// It skips when no Chromium is installed; .ci/run installs it.
func TestChromiumDecodes(t *testing.T) {
	var bin string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("no Chromium installed")
	}
	var chosen sync.Map // path -> Content-Encoding sent
	record := func(next celeris.HandlerFunc) celeris.HandlerFunc {
		return func(c *celeris.Context) error {
			err := next(c)
			chosen.Store(c.Clone(c.Path()), c.Clone(c.ResponseHeader("Content-Encoding"))) // borrowed till return
			return err
		}
	}
	routes := map[string][]mwcompress.Encoder{
		"/zstd": {compress.Zstd(0), compress.Brotli(0), compress.Gzip(0)},
		"/br":   {compress.Brotli(0), compress.Gzip(0)},
		"/gzip": {compress.Gzip(0)},
	}
	_, addr := celeristest.Serve(t, celeris.Config{}, func(s *celeris.Server) {
		for path, encs := range routes {
			s.GET(path, func(c *celeris.Context) error { return c.String(200, text) },
				record, mwcompress.New(mwcompress.Config{Encoders: encs}))
		}
	})
	for path := range routes {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu",
			"--user-data-dir="+t.TempDir(), "--dump-dom", "http://"+addr+path).Output()
		cancel()
		if err != nil {
			t.Fatalf("chromium %s: %v", path, err)
		}
		// record stores after the answer left, which Chromium may have shown
		// already.
		got, _ := chosen.Load(path)
		for deadline := time.Now().Add(5 * time.Second); got == nil && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			got, _ = chosen.Load(path)
		}
		if got != path[1:] {
			t.Errorf("%s: the server sent Content-Encoding %q", path, got)
		}
		if !strings.Contains(string(out), strings.TrimSpace(text)) {
			t.Errorf("%s: Chromium's DOM lacks the decoded text: %.200q", path, out)
		}
	}
}
