package bench_test

// The smoke test builds cmd/bench, lets it build and run every peer (and
// the celeris demo) for one second per HTTP scenario and protocol in fixed
// mode, then every HTTP peer for half a second on the simple scenario over
// TLS (h1tls and h2tls), then the HTTP/3 peers (celeris, quicgo) for half a
// second on simple and params over h3, then every WebSocket peer briefly per ws scenario
// (a few hundred round trips on 2 connections, and 20 idle connections),
// and checks that
// each measured something with no errors. It runs only when CI asks:
// CELERIS_BENCH_SMOKE=1 go test ./... (from bench/). Frameworks named in
// CELERIS_BENCH_EXCLUDE are left out.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/bench/internal/cli"
	"github.com/celeris-dev/celeris/bench/internal/report"
)

const smokeEnv = "CELERIS_BENCH_SMOKE"

func TestSmoke(t *testing.T) {
	if os.Getenv(smokeEnv) != "1" {
		t.Skipf("set %s=1 to run every framework for 1s per scenario and protocol", smokeEnv)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bench")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/bench").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/bench: %v\n%s", err, out)
	}
	excluded := strings.Split(os.Getenv(cli.ExcludeEnv), ",")
	for _, kind := range []smokeKind{httpSmoke, tlsSmoke, h3Smoke, wsSmoke} {
		var names []string
		for _, fw := range catalog.Frameworks {
			if !slices.Contains(excluded, fw.Name) && kind.relevant(fw) {
				names = append(names, fw.Name)
			}
		}
		if len(names) == 0 {
			continue
		}
		smoke(t, bin, filepath.Join(tmp, kind.name), kind, names)
	}
}

// smokeKind is one of the two smoke runs: HTTP or WebSocket.
type smokeKind struct {
	name   string
	protos []string
	// scenarios limits the check to these scenarios (nil: every one of protos).
	scenarios []string
	args      []string // run settings besides frameworks and -out
	file      string   // a chart the run must write
}

var (
	httpSmoke = smokeKind{
		name:   "http",
		protos: []string{catalog.H1, catalog.H2C},
		args: []string{"-scenarios", "simple,json,params,upload,download", "-protocols", "h1,h2c",
			"-duration", "1s", "-warmup", "200ms", "-conns", "4", "-streams", "2"},
		file: "simple-h1.svg",
	}
	tlsSmoke = smokeKind{
		name:      "tls",
		protos:    []string{catalog.H1TLS, catalog.H2TLS},
		scenarios: []string{"simple"},
		args: []string{"-scenarios", "simple", "-protocols", "h1tls,h2tls",
			"-duration", "500ms", "-warmup", "100ms", "-conns", "4", "-streams", "2"},
		file: "simple-h2tls.svg",
	}
	h3Smoke = smokeKind{
		name:      "h3",
		protos:    []string{catalog.H3},
		scenarios: []string{"simple", "params"},
		args: []string{"-scenarios", "simple,params", "-protocols", "h3",
			"-duration", "500ms", "-warmup", "100ms", "-conns", "2", "-streams", "4"},
		file: "params-h3.svg",
	}
	wsSmoke = smokeKind{
		name:   "ws",
		protos: []string{catalog.WS},
		args: []string{"-scenarios", "ws64,ws16k,wsidle", "-protocols", "ws", "-ws-conns", "2",
			"-ws-idle-conns", "20", "-duration", "200ms", "-warmup", "50ms"},
		file: "ws64-c2-ws.svg",
	}
)

func (k smokeKind) relevant(fw catalog.Framework) bool {
	for _, p := range k.protos {
		if fw.Relevant(p) {
			return true
		}
	}
	return false
}

// label is a scenario's name in the smoke run's reports (ws ones carry their connection count).
func (k smokeKind) label(sc catalog.Scenario) string {
	switch {
	case sc.Proto != catalog.WS:
		return sc.Name
	case sc.Idle:
		return sc.Name + "-c20"
	}
	return sc.Name + "-c2"
}

func smoke(t *testing.T, bin, dir string, kind smokeKind, names []string) {
	rep := runBench(t, bin, filepath.Join(dir, "run1"), kind, names)
	if _, err := os.Stat(filepath.Join(dir, "run1", kind.file)); err != nil {
		t.Errorf("missing %s: %v", kind.file, err)
	}
	problems := map[string][]string{}
	var retry []string
	for _, name := range names {
		if problems[name] = check(rep, kind, name); len(problems[name]) > 0 {
			retry = append(retry, name)
		}
	}
	// A shared machine can starve a short run; a real fault fails twice.
	if len(retry) > 0 {
		t.Logf("retrying once: %v", retry)
		rep2 := runBench(t, bin, filepath.Join(dir, "run2"), kind, retry)
		for _, name := range retry {
			problems[name] = check(rep2, kind, name)
		}
	}
	for _, name := range names {
		t.Run(kind.name+"/"+name, func(t *testing.T) {
			for _, p := range problems[name] {
				t.Error(p)
			}
		})
	}
}

// runBench runs the bench binary on frameworks, unpinned (so a busy core
// cannot starve a short run), and returns its results.json.
func runBench(t *testing.T, bin, outDir string, kind smokeKind, frameworks []string) *report.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	args := append([]string{"-frameworks", strings.Join(frameworks, ","), "-mode", "fixed",
		"-rounds", "1", "-progress", "off", "-server-cpus=", "-loader-cpus=", "-out", outDir}, kind.args...)
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	t.Logf("bench output:\n%s", out)
	if ctx.Err() != nil {
		t.Fatalf("bench did not finish in time: %v", ctx.Err())
	}
	// Exit status 1 means some server failed; check says which.
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("bench: %v", err)
	}
	js, err := os.ReadFile(filepath.Join(outDir, "results.json"))
	if err != nil {
		t.Fatalf("no results.json: %v", err)
	}
	var rep report.Report
	if err := json.Unmarshal(js, &rep); err != nil {
		t.Fatalf("results.json: %v", err)
	}
	return &rep
}

// check lists what is wrong with one framework's results.
func check(rep *report.Report, kind smokeKind, name string) []string {
	fw, _ := catalog.LookupFramework(name)
	var problems []string
	for _, sc := range catalog.Scenarios {
		if kind.scenarios != nil && !slices.Contains(kind.scenarios, sc.Name) {
			continue
		}
		for _, proto := range kind.protos {
			if !sc.For(proto) || !fw.Relevant(proto) {
				continue
			}
			res := rep.Find(fw.Name, kind.label(sc), proto)
			key := fw.Name + " " + kind.label(sc) + " " + proto
			switch {
			case res == nil:
				problems = append(problems, key+": not in results.json")
			case !fw.Supports(proto):
				if res.Status != report.StatusSkipped {
					problems = append(problems, fmt.Sprintf("%s: status %q, want skipped", key, res.Status))
				}
			case res.Status != report.StatusOK || res.Median == nil:
				problems = append(problems, fmt.Sprintf("%s: %s: %s", key, res.Status, strings.Join(res.Notes, "; ")))
			case sc.Idle && (res.Median.Requests != 20 || res.Median.RSSBytes <= 0):
				problems = append(problems, fmt.Sprintf("%s: %d round trips (want one per connection), RSS %d",
					key, res.Median.Requests, res.Median.RSSBytes))
			case !sc.Idle && res.Median.RPS <= 0:
				problems = append(problems, fmt.Sprintf("%s: RPS %v, want > 0", key, res.Median.RPS))
			case res.Median.Errors != 0 || res.Median.Non2xx != 0:
				problems = append(problems, fmt.Sprintf("%s: %d errors, %d non-2xx responses, want none",
					key, res.Median.Errors, res.Median.Non2xx))
			}
		}
	}
	return problems
}
