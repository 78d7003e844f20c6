package bench_test

// The smoke test builds cmd/bench, lets it build and run every peer (and
// the celeris demo) for one second per scenario and protocol in fixed mode,
// and checks that each measured something with no errors. It runs only when
// CI asks: CELERIS_BENCH_SMOKE=1 go test ./... (from bench/). Frameworks
// named in CELERIS_BENCH_EXCLUDE are left out.

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
	var names []string
	for _, fw := range catalog.Frameworks {
		if !slices.Contains(excluded, fw.Name) {
			names = append(names, fw.Name)
		}
	}
	rep := runBench(t, bin, filepath.Join(tmp, "run1"), names)
	for _, f := range []string{"results.md", "simple-h1.svg"} {
		if _, err := os.Stat(filepath.Join(tmp, "run1", f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	problems := map[string][]string{}
	var retry []string
	for _, name := range names {
		if problems[name] = check(rep, name); len(problems[name]) > 0 {
			retry = append(retry, name)
		}
	}
	// A shared machine can starve a one-second run; a real fault fails twice.
	if len(retry) > 0 {
		t.Logf("retrying once: %v", retry)
		rep2 := runBench(t, bin, filepath.Join(tmp, "run2"), retry)
		for _, name := range retry {
			problems[name] = check(rep2, name)
		}
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			for _, p := range problems[name] {
				t.Error(p)
			}
		})
	}
}

// runBench runs the bench binary on frameworks, unpinned (so a busy core
// cannot starve a short run), and returns its results.json.
func runBench(t *testing.T, bin, outDir string, frameworks []string) *report.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"-frameworks", strings.Join(frameworks, ","), "-scenarios", "all", "-protocols", "all",
		"-mode", "fixed", "-duration", "1s", "-warmup", "200ms", "-conns", "4", "-streams", "2",
		"-rounds", "1", "-progress", "off", "-server-cpus=", "-loader-cpus=", "-out", outDir)
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
func check(rep *report.Report, name string) []string {
	fw, _ := catalog.LookupFramework(name)
	var problems []string
	for _, sc := range catalog.Scenarios {
		for _, proto := range catalog.Protocols {
			res := rep.Find(fw.Name, sc.Name, proto)
			key := fw.Name + " " + sc.Name + " " + proto
			switch {
			case res == nil:
				problems = append(problems, key+": not in results.json")
			case !fw.Supports(proto):
				if res.Status != report.StatusSkipped {
					problems = append(problems, fmt.Sprintf("%s: status %q, want skipped", key, res.Status))
				}
			case res.Status != report.StatusOK || res.Median == nil:
				problems = append(problems, fmt.Sprintf("%s: %s: %s", key, res.Status, strings.Join(res.Notes, "; ")))
			case res.Median.RPS <= 0:
				problems = append(problems, fmt.Sprintf("%s: RPS %v, want > 0", key, res.Median.RPS))
			case res.Median.Errors != 0 || res.Median.Non2xx != 0:
				problems = append(problems, fmt.Sprintf("%s: %d errors, %d non-2xx responses, want none",
					key, res.Median.Errors, res.Median.Non2xx))
			}
		}
	}
	return problems
}
