package suite

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/celeris-dev/celeris/bench/internal/cli"
	"github.com/celeris-dev/celeris/bench/internal/report"
)

// Scaling is "bench scaling": it reads the results.json files of runs made
// with one server core (-base) and with several (-multi), gathers every
// round of each (framework, scenario, protocol) across the files of a side,
// and prints a Markdown table: median RPS on each side, their ratio, and
// the median req per server CPU-s on each side. Interleave the runs (one
// round of each side in turn, each its own results.json) and pass them all.
// args are the flags after the word "scaling".
func Scaling(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench scaling", flag.ContinueOnError)
	fs.SetOutput(stderr)
	base := fs.String("base", "", "results.json files (comma-separated, globs allowed) of the single-core runs")
	multi := fs.String("multi", "", "results.json files (comma-separated, globs allowed) of the multi-core runs")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bench scaling -base 'one/r*/results.json' -multi 'eight/r*/results.json'")
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if *base == "" || *multi == "" {
		return errors.New("-base and -multi are both required")
	}
	b, err := loadSide(*base)
	if err != nil {
		return fmt.Errorf("-base: %w", err)
	}
	m, err := loadSide(*multi)
	if err != nil {
		return fmt.Errorf("-multi: %w", err)
	}
	writeScaling(stdout, b, m)
	return nil
}

// side is every run of one configuration, by (framework, scenario, protocol).
type side struct {
	procs string // the servers' GOMAXPROCS, from the reports' settings
	cpus  string // their CPU list
	files int
	keys  []scaleKey // first-seen order
	runs  map[scaleKey][]report.Run
	at    map[scaleKey]map[measured]report.Run // each run by its file and round (bench peers)
	notes map[scaleKey][]string                // why a key has no run (skipped, failed)
}

type scaleKey struct{ framework, scenario, protocol string }

// measured names one round of one results file: two frameworks measured there
// ran under the same conditions.
type measured struct{ file, round int }

// loadSide reads every results.json a comma-separated list of paths and
// globs names; it is an error if one cannot be read or none is named.
func loadSide(list string) (*side, error) {
	sd := &side{runs: map[scaleKey][]report.Run{}, at: map[scaleKey]map[measured]report.Run{}, notes: map[scaleKey][]string{}}
	for _, pat := range strings.Split(list, ",") {
		if pat = strings.TrimSpace(pat); pat == "" {
			continue
		}
		paths, err := filepath.Glob(pat)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", pat, err)
		}
		if len(paths) == 0 {
			return nil, fmt.Errorf("%q names no file", pat)
		}
		for _, p := range paths {
			if err := sd.add(p); err != nil {
				return nil, err
			}
		}
	}
	if sd.files == 0 {
		return nil, errors.New("no results.json named")
	}
	return sd, nil
}

func (sd *side) add(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("%s: not a results.json: %v", path, err)
	}
	sd.files++
	procs, cpus := r.Meta.Settings["server GOMAXPROCS"], r.Meta.Settings["server CPUs"]
	if sd.procs == "" {
		sd.procs, sd.cpus = procs, cpus
	} else if procs != sd.procs {
		return fmt.Errorf("%s: server GOMAXPROCS %s, other files of this side have %s", path, procs, sd.procs)
	}
	for _, res := range r.Results {
		k := scaleKey{res.Framework, res.Scenario, res.Protocol}
		if _, seen := sd.runs[k]; !seen {
			sd.keys = append(sd.keys, k)
			sd.runs[k] = nil
		}
		sd.runs[k] = append(sd.runs[k], res.Runs...)
		for _, run := range res.Runs {
			if sd.at[k] == nil {
				sd.at[k] = map[measured]report.Run{}
			}
			sd.at[k][measured{sd.files, run.Round}] = run
		}
		if len(res.Runs) == 0 {
			for _, n := range res.Notes {
				if !slices.Contains(sd.notes[k], n) {
					sd.notes[k] = append(sd.notes[k], n)
				}
			}
			if len(res.Notes) == 0 && res.Status != report.StatusOK {
				sd.notes[k] = append(sd.notes[k], res.Status)
			}
		}
	}
	return nil
}

// medians returns the median RPS and the median req per server CPU-s of a
// key's runs, and how many runs carried a warning.
func (sd *side) medians(k scaleKey) (rps, perCPU float64, n, warned int) {
	var r, c []float64
	for _, run := range sd.runs[k] {
		r = append(r, run.RPS)
		c = append(c, run.ReqPerServerCPUS)
		if len(run.Warnings) > 0 {
			warned++
		}
	}
	return report.Median(r), report.Median(c), len(r), warned
}

// sortKeys orders keys by protocol, then scenario, keeping the frameworks'
// order within each.
func sortKeys(keys []scaleKey) {
	slices.SortStableFunc(keys, func(a, b scaleKey) int {
		if c := strings.Compare(a.protocol, b.protocol); c != 0 {
			return c
		}
		return strings.Compare(a.scenario, b.scenario)
	})
}

// writeScaling prints one row per (protocol, scenario, framework) found on
// either side, the multi-core side's order first.
func writeScaling(w io.Writer, base, multi *side) {
	bn, mn := coresLabel(base), coresLabel(multi)
	fmt.Fprintf(w, "Servers on %s (GOMAXPROCS %s) vs %s (GOMAXPROCS %s); medians over %d and %d results files.\n\n",
		orNone(base.cpus), base.procs, orNone(multi.cpus), multi.procs, base.files, multi.files)
	fmt.Fprintf(w, "| protocol | scenario | framework | RPS %s | RPS %s | %s / %s | req/server-CPU-s %s | req/server-CPU-s %s | runs | warned |\n",
		bn, mn, mn, bn, bn, mn)
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|")
	keys := slices.Clone(multi.keys)
	for _, k := range base.keys {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	sortKeys(keys)
	for _, k := range keys {
		br, bc, bN, bW := base.medians(k)
		mr, mc, mN, mW := multi.medians(k)
		if bN == 0 && mN == 0 {
			why := slices.Clone(multi.notes[k])
			for _, n := range base.notes[k] {
				if !slices.Contains(why, n) {
					why = append(why, n)
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | — | — | — | — | — | 0 | %s |\n", k.protocol, k.scenario, k.framework, strings.Join(why, "; "))
			continue
		}
		ratio := "—"
		if br > 0 && mN > 0 {
			ratio = fmt.Sprintf("%.2fx", mr/br)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %d+%d | %d+%d |\n",
			k.protocol, k.scenario, k.framework, num(br, bN), num(mr, mN), ratio,
			num(bc, bN), num(mc, mN), bN, mN, bW, mW)
	}
}

func coresLabel(sd *side) string {
	if sd.procs == "" {
		return "?-core"
	}
	return sd.procs + "-core"
}

// num formats a median with thousands separators, "—" without runs.
func num(v float64, n int) string {
	if n == 0 {
		return "—"
	}
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
