package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go/http3"

	"github.com/celeris-dev/celeris/celeristest"
	"github.com/celeris-dev/celeris/compress"
	"github.com/celeris-dev/celeris/compress/compresstest"
	celerish3 "github.com/celeris-dev/celeris/http3"
	"github.com/celeris-dev/celeris/internal/demo"
)

// TestDemoJSONCodings: with the encoders main registers, the demo's /json
// answers zstd, br or gzip as Accept-Encoding asks, over HTTP/1.1, h2c and h2
// over TLS (Go's client), HTTP/3 (quic-go's client) and curl (h1 and h2c, decoding
// itself); every answer decodes with Python's zstandard, brotli and gzip.
func TestDemoJSONCodings(t *testing.T) {
	if !compresstest.HavePython() {
		t.Skip("python3 with zstandard and brotli is not installed (pip install zstandard brotli)")
	}
	compress.Register()
	s, err := demo.NewTLSServer("127.0.0.1:0", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h3 := celerish3.Enable(s, celerish3.Config{})
	addr := celeristest.Start(t, s)
	udp, err := h3.WaitReady()
	if err != nil {
		t.Fatal(err)
	}
	h1 := &http.Transport{DisableCompression: true}
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	h2c := &http.Transport{DisableCompression: true, Protocols: &p}
	h2 := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true, DisableCompression: true}
	q := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableCompression: true}
	defer h1.CloseIdleConnections()
	defer h2c.CloseIdleConnections()
	defer h2.CloseIdleConnections()
	defer q.Close()
	const want = `{"message":"Hello, World!"}`
	var (
		labels  []string
		answers []compresstest.Encoded
	)
	for _, c := range []struct {
		name  string
		rt    http.RoundTripper
		base  string
		major int
	}{
		{name: "h1", rt: h1, base: "http://" + addr, major: 1},
		{name: "h2c", rt: h2c, base: "http://" + addr, major: 2},
		{name: "h2", rt: h2, base: "https://" + s.TLSAddr().String(), major: 2},
		{name: "h3", rt: q, base: "https://" + udp.String(), major: 3},
	} {
		cl := &http.Client{Transport: c.rt, Timeout: 30 * time.Second}
		for _, tc := range []struct{ ae, coding string }{
			{ae: "zstd", coding: "zstd"},
			{ae: "br", coding: "br"},
			{ae: "gzip", coding: "gzip"},
			{ae: "gzip, deflate, br, zstd", coding: "zstd"},
			{ae: "zstd;q=0.5, br;q=0.8, gzip;q=0.1", coding: "br"},
			{ae: "zstd;q=0, br;q=0, *", coding: "gzip"},
			{ae: "identity", coding: ""},
		} {
			req, _ := http.NewRequest("GET", c.base+"/json", nil)
			req.Header.Set("Accept-Encoding", tc.ae)
			resp, err := cl.Do(req)
			if err != nil {
				t.Fatalf("%s %q: %v", c.name, tc.ae, err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s %q: %v", c.name, tc.ae, err)
			}
			if resp.ProtoMajor != c.major || resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != tc.coding ||
				!strings.Contains(resp.Header.Get("Vary"), "Accept-Encoding") {
				t.Fatalf("%s %q: %s %d, Content-Encoding %q, Vary %q", c.name, tc.ae, resp.Proto, resp.StatusCode,
					resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
			}
			if tc.coding == "" {
				if string(b) != want {
					t.Errorf("%s identity: %q", c.name, b)
				}
				continue
			}
			labels = append(labels, c.name+" "+tc.ae)
			answers = append(answers, compresstest.Encoded{Coding: tc.coding, Body: b})
		}
	}
	for i, out := range compresstest.DecodeWithPython(t, answers) {
		if string(out) != want {
			t.Errorf("%s: decoded %q", labels[i], out)
		}
	}
	// curl decodes by itself (curl -V lists brotli and zstd when built with them).
	v, err := exec.Command("curl", "-V").Output()
	if err != nil {
		t.Log("curl is not installed: its checks skipped")
		return
	}
	for _, coding := range []string{"zstd", "br", "gzip"} {
		feature := map[string]string{"zstd": "zstd", "br": "brotli", "gzip": "libz"}[coding]
		if !strings.Contains(string(v), feature) {
			t.Logf("curl lacks %s: %s skipped", feature, coding)
			continue
		}
		for _, proto := range []string{"--http1.1", "--http2-prior-knowledge"} {
			out, err := exec.Command("curl", "-sS", "--compressed", proto, "-H", "Accept-Encoding: "+coding,
				"-D", "/dev/stderr", "http://"+addr+"/json").CombinedOutput()
			head, body, _ := strings.Cut(string(out), "\r\n\r\n")
			if err != nil || !strings.Contains(strings.ToLower(head), "content-encoding: "+coding) || body != want {
				t.Errorf("curl %s %s: %v: head %q body %q", proto, coding, err, head, body)
			}
		}
	}
}
