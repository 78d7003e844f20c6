package demo

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestDemoProblemDetails: the demo's errors are application/problem+json (RFC
// 9457) when Accept prefers it and text/plain as before otherwise, over
// HTTP/1.1 and h2c: a handler's 400, the router's 404 and a panic's 500.
func TestDemoProblemDetails(t *testing.T) {
	t.Parallel()
	base := startDemo(t, false)
	for name, client := range clients() {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				path   string
				status int
				text   string // the answer without a preference for problems
				detail string
			}{
				{path: "/download?size=x", status: 400, text: "size must be an integer from 0 to 67108864",
					detail: "size must be an integer from 0 to 67108864"},
				{path: "/no/such/route", status: 404, text: "Not Found"},
				{path: "/panic", status: 500, text: "Internal Server Error"},
			} {
				for _, accept := range []string{"", "*/*", "application/problem+json", "application/json, text/plain;q=0.5"} {
					req, _ := http.NewRequest("GET", base+tc.path, nil)
					if accept != "" {
						req.Header.Set("Accept", accept)
					}
					resp, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != tc.status || resp.Header.Get("X-Request-Id") == "" {
						t.Fatalf("%s Accept %q: %d %v", tc.path, accept, resp.StatusCode, resp.Header)
					}
					ct := resp.Header.Get("Content-Type")
					if !strings.Contains(accept, "json") {
						if !strings.HasPrefix(ct, "text/plain") || string(b) != tc.text {
							t.Errorf("%s Accept %q: %s %q", tc.path, accept, ct, b)
						}
						continue
					}
					var p struct {
						Type, Title, Detail, Instance string
						Status                        int
					}
					if err := json.Unmarshal(b, &p); err != nil || ct != "application/problem+json" {
						t.Fatalf("%s Accept %q: %s %q (%v)", tc.path, accept, ct, b, err)
					}
					path, _, _ := strings.Cut(tc.path, "?")
					if p.Type != "about:blank" || p.Title != http.StatusText(tc.status) || p.Status != tc.status ||
						p.Detail != tc.detail || p.Instance != path {
						t.Errorf("%s Accept %q: %+v", tc.path, accept, p)
					}
				}
			}
		})
	}
}
