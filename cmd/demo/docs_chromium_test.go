package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/browsertest"
)

// TestDemoDocsChromium: headless Chromium renders the demo's /docs page (its
// Swagger UI, from the demo itself) with the network limited to the demo:
// other hosts resolve to nothing and every other connection goes through a
// proxy that does not exist. The page must show the description's title and
// one block per operation, without Swagger UI's error panel, and Chromium's
// net-log must name no URL outside the demo's origin.
func TestDemoDocsChromium(t *testing.T) {
	chromium := browsertest.Chromium(t)
	base := startDemoHTTP(t)
	netlog := filepath.Join(t.TempDir(), "netlog.json")
	b := browsertest.Start(t, chromium,
		"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--proxy-server=http://127.0.0.1:9",
		"--log-net-log="+netlog)
	deadline := time.Now().Add(40 * time.Second)
	page, err := b.Open(deadline, base+"/docs")
	if err != nil {
		t.Fatal(err)
	}
	const state = `(() => {
	  const title = document.querySelector(".swagger-ui .info .title");
	  const errors = document.querySelector(".swagger-ui .errors-wrapper");
	  return [title ? title.textContent : "", document.querySelectorAll(".swagger-ui .opblock").length,
	    errors ? errors.textContent : ""].join("|");
	})()`
	got, err := page.Poll(deadline, state, func(v string) (bool, error) {
		parts := strings.SplitN(v, "|", 3)
		n, _ := strconv.Atoi(parts[1])
		return strings.HasPrefix(parts[0], "Celeris demo") && n >= 15, nil
	})
	if err != nil {
		t.Fatalf("docs page state (title|operations|errors) %q: %v", got, err)
	}
	if parts := strings.SplitN(got, "|", 3); parts[2] != "" {
		t.Fatalf("Swagger UI reports errors: %s", parts[2])
	}
	outside, err := page.Eval(deadline, `performance.getEntriesByType("resource").map(e => e.name)
	  .filter(n => !n.startsWith(location.origin + "/")).join(" ")`)
	if err != nil || outside != "" {
		t.Fatalf("resources from outside the demo: %q (%v)", outside, err)
	}
	b.Close() // completes the net-log

	// Every request the page made (its initiator is the demo's origin) went to
	// the demo; Chromium's own background requests (update checks) have no
	// such initiator, and fail at the dead proxy.
	raw, err := os.ReadFile(netlog)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Events []struct {
			Params struct {
				URL       string `json:"url"`
				Initiator string `json:"initiator"`
			} `json:"params"`
		} `json:"events"`
	}
	// A net-log cut short by the browser's exit lacks its closing "]}".
	if err := json.Unmarshal(raw, &log); err != nil {
		trimmed := strings.TrimRight(strings.TrimSpace(string(raw)), ",")
		if err := json.Unmarshal([]byte(trimmed+"]}"), &log); err != nil {
			t.Fatalf("net-log: %v", err)
		}
	}
	fromPage := map[string]bool{}
	for _, e := range log.Events {
		if e.Params.Initiator != base || e.Params.URL == "" {
			continue
		}
		if !strings.HasPrefix(e.Params.URL, base+"/") {
			t.Errorf("the page requested %s, outside %s", e.Params.URL, base)
		}
		fromPage[e.Params.URL] = true
	}
	for _, want := range []string{"/docs/swagger-ui-bundle.js", "/docs/swagger-ui.css", "/openapi.json"} {
		if !fromPage[base+want] {
			t.Errorf("the net-log shows no request of the page for %s (it has %v)", want, fromPage)
		}
	}
}
