package suite

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/bench/internal/cli"
	"github.com/celeris-dev/celeris/bench/internal/load"
	"github.com/celeris-dev/celeris/bench/internal/report"
)

func TestPinningCommand(t *testing.T) {
	p := pinning{server: "0"}
	if got := strings.Join(p.command("/x/peer", "-addr", "a"), " "); got != "taskset -c 0 /x/peer -addr a" {
		t.Errorf("pinned command = %q", got)
	}
	if got := strings.Join((pinning{}).command("/x/peer", "-a"), " "); got != "/x/peer -a" {
		t.Errorf("unpinned command = %q", got)
	}
}

func TestFindBenchDir(t *testing.T) {
	// The test runs in bench/internal/suite: the module is two levels up.
	dir, err := findBenchDir("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cmd", "peer")); err != nil {
		t.Errorf("findBenchDir = %s, which has no cmd/peer", dir)
	}
	if _, err := findBenchDir(t.TempDir()); err == nil {
		t.Error("an empty directory was accepted as -bench-dir")
	}
}

func TestConsole(t *testing.T) {
	var b bytes.Buffer
	c := newConsole(&b, "on")
	c.progress("gin", "simple", "h1", 8, 1234, 1500*time.Microsecond)
	c.printf("done %d", 1)
	out := b.String()
	if !strings.HasPrefix(out, "\rgin") || !strings.Contains(out, "1,234") || !strings.HasSuffix(out, "\rdone 1\n") {
		t.Errorf("console output %q", out)
	}
	b.Reset()
	quiet := newConsole(&b, "auto") // a buffer is not a terminal
	quiet.progress("gin", "simple", "h1", 8, 1234, time.Millisecond)
	if b.Len() != 0 {
		t.Errorf("progress drawn off a terminal: %q", b.String())
	}
}

func TestToRun(t *testing.T) {
	r := load.Result{
		Clients: 8, RPS: 1000, Elapsed: 2 * time.Second,
		Total:         load.Counts{OK: 2000},
		Percentiles:   load.Percentiles{P95: 1500 * time.Microsecond},
		LoaderCPUTime: 500 * time.Millisecond,
		Series:        []load.Point{{Clients: 8, RPS: 1000, Percentiles: load.Percentiles{P95: 2 * time.Millisecond}}},
	}
	// Server 1 s + loader 0.5 s of 2.1 s busy: others used 0.6 s over 2 s = 30 % of a core.
	run := toRun(1, r, time.Second, 2100*time.Millisecond)
	if run.ReqPerServerCPUS != 2000 || run.P95Ms != 1.5 || run.Series[0] != (report.Point{Clients: 8, RPS: 1000, P95Ms: 2}) {
		t.Errorf("run %+v", run)
	}
	if run.OtherCPU < 0.29 || run.OtherCPU > 0.31 || len(run.Warnings) != 1 {
		t.Errorf("noise: other %v, warnings %v", run.OtherCPU, run.Warnings)
	}
}

func TestConnCounts(t *testing.T) {
	s := &Suite{cfg: &cli.Config{WSConns: []int{1, 100}, WSIdleConns: 7}}
	for name, want := range map[string]string{
		"simple": "[simple]",
		"ws64":   "[ws64-c1 ws64-c100]",
		"wsidle": "[wsidle-c7]",
	} {
		sc, _ := catalog.LookupScenario(name)
		var got []string
		for _, n := range s.connCounts(sc) {
			got = append(got, label(sc, n))
		}
		if fmt.Sprint(got) != want {
			t.Errorf("%s: %v, want %s", name, got, want)
		}
	}
}
