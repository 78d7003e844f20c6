package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sampleReport() *Report {
	r := &Report{Meta: Meta{
		Started:    time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		GoVersion:  "go1.26",
		OSArch:     "linux/amd64",
		CPUs:       2,
		Mode:       "rampup",
		Rounds:     3,
		Baseline:   "celeris",
		Settings:   map[string]string{"server-procs": "1"},
		Frameworks: []string{"celeris", "nethttp", "fasthttp"},
		Scenarios:  []string{"simple"},
		Protocols:  []string{"h1", "h2c"},
	}}
	series := []Point{{Clients: 4, RPS: 1000, P95Ms: 0.5}, {Clients: 8, RPS: 1500, P95Ms: 1.2}}
	cel := r.Get("celeris", "simple", "h1")
	for i, rps := range []float64{100000, 90000, 110000} {
		cel.AddRun(Run{Round: i + 1, Clients: 40 + i, RPS: rps, P95Ms: 1.5, ReqPerServerCPUS: rps / 2, Series: series})
	}
	nh := r.Get("nethttp", "simple", "h1")
	nh.AddRun(Run{Round: 1, Clients: 20, RPS: 50000, P95Ms: 3.25, ReqPerServerCPUS: 40000, Series: series,
		Warnings: []string{"loader saturated"}})
	fh := r.Get("fasthttp", "simple", "h2c")
	fh.Status = StatusSkipped
	fh.AddNote("fasthttp does not speak h2c")
	r.Get("nethttp", "simple", "h2c").AddNote("server failed to start: exit status 1")
	r.Notes = []string{"taskset not found: not pinned"}
	return r
}

func TestSummarizeMedian(t *testing.T) {
	r := sampleReport()
	r.Summarize()
	cel := r.Find("celeris", "simple", "h1")
	if cel.Median == nil || cel.Median.RPS != 100000 || cel.Median.Round != 1 || cel.Median.ReqPerServerCPUS != 50000 {
		t.Fatalf("celeris median = %+v", cel.Median)
	}
	if nh := r.Find("nethttp", "simple", "h1"); nh.Ratio != 0.5 {
		t.Fatalf("nethttp ratio = %v, want 0.5", nh.Ratio)
	}
	if fail := r.Find("nethttp", "simple", "h2c"); fail.Status != StatusFailed || fail.Median != nil {
		t.Fatalf("failed result = %+v", fail)
	}
	// Even count: lower middle for the run, mean of the middle two for efficiency.
	m := median([]Run{{RPS: 4, ReqPerServerCPUS: 4}, {RPS: 1, ReqPerServerCPUS: 1}, {RPS: 3, ReqPerServerCPUS: 3}, {RPS: 2, ReqPerServerCPUS: 2}})
	if m.RPS != 2 || m.ReqPerServerCPUS != 2.5 {
		t.Fatalf("even median = %+v", m)
	}
}

func TestMarkdown(t *testing.T) {
	r := sampleReport()
	r.Summarize()
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"## simple — h1\n",
		"| framework | max clients | max RPS | p95 at max | req per server CPU-s | ratio to celeris | errors / non-2xx |",
		"| celeris | 40 | 100,000 | 1.50 ms | 50,000 | 1.00 | 0 / 0 |",
		"| nethttp | 20 | 50,000 | 3.25 ms | 40,000 | 0.50 | 0 / 0 |",
		"## simple — h2c\n",
		"| fasthttp | — | — | — | — | — | skipped: fasthttp does not speak h2c |",
		"| nethttp | — | — | — | — | — | failed: server failed to start: exit status 1 |",
		"- taskset not found: not pinned",
		"- nethttp simple h1 round 1: loader saturated",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q\n%s", want, md)
		}
	}
}

func TestFormatting(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999.4: "999", 1000: "1,000", 1234567.8: "1,234,568"} {
		if got := Thousands(in); got != want {
			t.Errorf("Thousands(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{0.123: "0.12 ms", 12.34: "12.3 ms", 150.4: "150 ms"} {
		if got := FormatMs(in); got != want {
			t.Errorf("FormatMs(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestNiceScale(t *testing.T) {
	tests := []struct {
		max             float64
		n               int
		wantStep, wantT float64
	}{
		{max: 1234, n: 5, wantStep: 500, wantT: 1500},
		{max: 100, n: 5, wantStep: 20, wantT: 100},
		{max: 0.37, n: 5, wantStep: 0.1, wantT: 0.4},
		{max: 0, n: 5, wantStep: 1, wantT: 1},
		{max: 600, n: 8, wantStep: 100, wantT: 600},
	}
	for _, tt := range tests {
		step, top := niceScale(tt.max, tt.n)
		if step != tt.wantStep || top < tt.wantT-1e-9 || top > tt.wantT+1e-9 {
			t.Errorf("niceScale(%v, %d) = %v, %v; want %v, %v", tt.max, tt.n, step, top, tt.wantStep, tt.wantT)
		}
	}
}

func TestSVG(t *testing.T) {
	r := sampleReport()
	r.Summarize()
	c, ok := r.ChartFor("simple", "h1")
	if !ok {
		t.Fatal("no chart")
	}
	var b bytes.Buffer
	if err := WriteSVG(&b, c); err != nil {
		t.Fatal(err)
	}
	// Well-formed XML, with one polyline per framework and panel, and a legend.
	dec := xml.NewDecoder(&b)
	polylines, texts := 0, map[string]bool{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("invalid XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "polyline" {
			polylines++
		}
		if cd, ok := tok.(xml.CharData); ok {
			texts[string(cd)] = true
		}
	}
	if polylines != 4 {
		t.Errorf("%d polylines, want 4 (2 frameworks x 2 panels)", polylines)
	}
	for _, want := range []string{"celeris", "nethttp", "concurrent clients", "requests per second", "p95 latency (ms)", "1500"} {
		if !texts[want] {
			t.Errorf("SVG lacks text %q", want)
		}
	}
	if _, ok := r.ChartFor("simple", "h2c"); ok {
		t.Error("chart for a table with no data")
	}
}

func TestWriteAll(t *testing.T) {
	dir := t.TempDir()
	files, err := WriteAll(dir, sampleReport())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"results.json", "results.md", "simple-h1.svg"}
	if len(files) != len(want) {
		t.Fatalf("wrote %v, want %v", files, want)
	}
	for i, f := range files {
		if filepath.Base(f) != want[i] {
			t.Errorf("file %d = %s, want %s", i, f, want[i])
		}
	}
	js, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if back.Find("celeris", "simple", "h1").Median.RPS != 100000 {
		t.Error("results.json does not round-trip the median")
	}
}

func TestWSTables(t *testing.T) {
	r := &Report{Meta: Meta{Baseline: "celeris", Mode: "fixed", Rounds: 1,
		Frameworks: []string{"celeris", "gorilla"}, Scenarios: []string{"ws64-c100", "wsidle-c1000"}, Protocols: []string{"ws"}}}
	r.Get("celeris", "ws64-c100", "ws").AddRun(Run{Clients: 100, RPS: 1000, ReqPerServerCPUS: 2000, RSSBytes: 12e6})
	r.Get("gorilla", "ws64-c100", "ws").AddRun(Run{Clients: 100, RPS: 1500, ReqPerServerCPUS: 1000, RSSBytes: 30e6})
	r.Get("celeris", "wsidle-c1000", "ws").AddRun(Run{Clients: 1000, RSSBaseBytes: 8e6, RSSBytes: 8e6 + 3*1024*1000, ServerCPUS: 0.01})
	r.Summarize()
	if g := r.Find("gorilla", "ws64-c100", "ws"); g.CPURatio != 0.5 || g.Ratio != 1.5 {
		t.Fatalf("ratios: cpu %v rps %v", g.CPURatio, g.Ratio)
	}
	var b strings.Builder
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"## ws64-c100 — ws",
		"| gorilla | 100 | 1,500 | 0.00 ms | 0.00 ms | 1,000 | 0.50 | 30.0 MB | 0 |",
		"## wsidle-c1000 — ws",
		"| celeris | 1,000 | 8.0 MB | 11.1 MB | 3.0 KiB | 0.01 s | 0 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("results.md lacks %q:\n%s", want, md)
		}
	}
}
