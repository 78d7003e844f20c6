package suite

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/bench/internal/report"
)

// writeReport writes a results.json with one run per rps value for celeris
// h1 simple, and a skipped fasthttp h2c row.
func writeReport(t *testing.T, path, procs string, rps ...float64) {
	t.Helper()
	r := &report.Report{Meta: report.Meta{Settings: map[string]string{"server GOMAXPROCS": procs, "server CPUs": "0-" + procs}}}
	res := r.Get("celeris", "simple", "h1")
	for i, v := range rps {
		res.AddRun(report.Run{Round: i + 1, RPS: v, ReqPerServerCPUS: v / 2})
	}
	r.Get("fasthttp", "simple", "h2c").Status = report.StatusSkipped
	r.Find("fasthttp", "simple", "h2c").AddNote("fasthttp speaks HTTP/1.1 only")
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestScaling(t *testing.T) {
	dir := t.TempDir()
	// Rounds interleaved into separate files; medians across all of them.
	writeReport(t, filepath.Join(dir, "base", "r1", "results.json"), "1", 100)
	writeReport(t, filepath.Join(dir, "base", "r2", "results.json"), "1", 300, 200)
	writeReport(t, filepath.Join(dir, "multi", "r1", "results.json"), "8", 1500)
	writeReport(t, filepath.Join(dir, "multi", "r2", "results.json"), "8", 1400)
	var out, errb bytes.Buffer
	err := Scaling([]string{"-base", filepath.Join(dir, "base", "r*", "results.json"),
		"-multi", filepath.Join(dir, "multi", "r1", "results.json") + "," + filepath.Join(dir, "multi", "r2", "results.json")}, &out, &errb)
	if err != nil {
		t.Fatal(err, errb.String())
	}
	got := out.String()
	for _, want := range []string{
		"GOMAXPROCS 1) vs 0-8 (GOMAXPROCS 8); medians over 2 and 2 results files",
		"| RPS 1-core | RPS 8-core | 8-core / 1-core |",
		"| h1 | simple | celeris | 200 | 1,450 | 7.25x | 100 | 725 | 3+2 | 0+0 |",
		"| h2c | simple | fasthttp | — | — | — | — | — | 0 | fasthttp speaks HTTP/1.1 only |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

func TestScalingErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "a.json")
	writeReport(t, good, "1", 100)
	other := filepath.Join(dir, "b.json")
	writeReport(t, other, "2", 100)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{"), 0o644)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "-base and -multi are both required"},
		{[]string{"-base", good}, "-base and -multi are both required"},
		{[]string{"-base", good, "-multi", filepath.Join(dir, "none*.json")}, "-multi: \"" + filepath.Join(dir, "none*.json") + "\" names no file"},
		{[]string{"-base", bad, "-multi", good}, "-base: " + bad + ": not a results.json"},
		{[]string{"-base", good + "," + other, "-multi", good}, "server GOMAXPROCS 2, other files of this side have 1"},
		{[]string{"-base", good, "-multi", good, "x"}, `unexpected argument "x"`},
		{[]string{"-base", ",", "-multi", good}, "-base: no results.json named"},
	} {
		err := Scaling(tt.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Scaling(%q) = %v, want %q", tt.args, err, tt.want)
		}
	}
}

func TestPrebuilt(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, PeerBinary), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, DemoBinary), []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := executable(dir, PeerBinary)
	if err != nil || p != filepath.Join(dir, PeerBinary) {
		t.Errorf("executable(peer) = %q, %v", p, err)
	}
	if _, err := executable(dir, DemoBinary); err == nil || !strings.Contains(err.Error(), "not an executable file") {
		t.Errorf("a file without x bits: %v", err)
	}
	if _, err := executable(dir, "floor"); err == nil || !strings.Contains(err.Error(), "bundle.sh") {
		t.Errorf("a missing binary: %v", err)
	}
	if _, err := executable(filepath.Dir(dir), filepath.Base(dir)); err == nil {
		t.Error("a directory was taken for a binary")
	}
}

// TestPeers: ratios are taken within a round; a round where the peer was not
// measured gives none; medians and ranges over the rounds left.
func TestPeers(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, runs map[string]float64) {
		r := &report.Report{Meta: report.Meta{Settings: map[string]string{"server GOMAXPROCS": "8", "server CPUs": "0-7"}}}
		for fw, rps := range runs {
			r.Get(fw, "simple", "h1").AddRun(report.Run{Round: 1, RPS: rps, ReqPerServerCPUS: rps / 4,
				ServerCPUS: 14, ElapsedS: 2, LoaderCPU: 0.5, P99Ms: 1, Errors: 1})
		}
		r.Get("fasthttp", "simple", "h2c").Status = report.StatusSkipped
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name, "results.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("r1", map[string]float64{"celeris": 900, "fasthttp": 1000, "nethttp": 600})
	write("r2", map[string]float64{"celeris": 1200, "fasthttp": 1000, "nethttp": 600})
	write("r3", map[string]float64{"celeris": 1100, "nethttp": 500}) // fasthttp failed in this round
	var out, errb bytes.Buffer
	if err := Peers([]string{"-results", filepath.Join(dir, "r*", "results.json"), "-mine", "celeris", "-peers", "fasthttp,nethttp,gin"}, &out, &errb); err != nil {
		t.Fatal(err, errb.String())
	}
	got := out.String()
	for _, want := range []string{
		"Servers on 0-7 (GOMAXPROCS 8); 3 results files.",
		"| h1 | simple | celeris | 1,100 (900–1,200) | 275 | 7.0 | 50 % | 1.00 ms | 3 |",
		"| h1 | simple | fasthttp | 1,000 (1,000–1,000) | 250 | 7.0 | 50 % | 1.00 ms | 2 |",
		"| h1 | simple | celeris ÷ fasthttp | 1.05 (0.90–1.20) | 1.05 (0.90–1.20) | 2 |",
		"| h1 | simple | celeris ÷ nethttp | 2.00 (1.50–2.20) | 2.00 (1.50–2.20) | 3 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("peers lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "÷ gin") || strings.Contains(got, "h2c") {
		t.Errorf("a row for a framework or protocol with no runs:\n%s", got)
	}
	if err := Peers([]string{}, &out, &errb); err == nil || !strings.Contains(err.Error(), "-results is required") {
		t.Errorf("no -results: %v", err)
	}
	if err := Peers([]string{"-results", filepath.Join(dir, "none*.json")}, &out, &errb); err == nil || !strings.Contains(err.Error(), "names no file") {
		t.Errorf("a glob with no file: %v", err)
	}
}
