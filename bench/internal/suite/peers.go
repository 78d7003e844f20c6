package suite

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/celeris-dev/celeris/bench/internal/cli"
	"github.com/celeris-dev/celeris/bench/internal/report"
)

// Peers is "bench peers": it reads the results.json files of runs on one
// configuration (multicore.sh's 8-core side, say), and prints two Markdown
// tables: per (protocol, scenario, framework) the median RPS with its range
// over the rounds, the median req per server CPU-s, the server cores kept
// busy, the loader's share of its cores, p99 and the errors summed; then, for
// each of -mine against each of -peers, the ratios of RPS and of req per
// server CPU-s taken within a round (the same file and round), their median
// and range. args are the flags after the word "peers".
func Peers(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench peers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	results := fs.String("results", "", "results.json files (comma-separated, globs allowed), one configuration")
	mine := fs.String("mine", "celeris,celeris-inline,celeris-std", "comma-separated frameworks to compare")
	peers := fs.String("peers", "fasthttp,nethttp,gin,echo,chi", "comma-separated frameworks to compare them with")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: bench peers -results 'eight/r*/results.json' [-mine celeris] [-peers fasthttp,nethttp]")
		fs.PrintDefaults()
	}
	if err := cli.ParseFlags(fs, args); err != nil {
		return err
	}
	if *results == "" {
		return errors.New("-results is required")
	}
	sd, err := loadSide(*results)
	if err != nil {
		return fmt.Errorf("-results: %w", err)
	}
	writePeers(stdout, sd, split(*mine), split(*peers))
	return nil
}

func split(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func writePeers(w io.Writer, sd *side, mine, peers []string) {
	fmt.Fprintf(w, "Servers on %s (GOMAXPROCS %s); %d results files.\n\n", orNone(sd.cpus), sd.procs, sd.files)
	fmt.Fprintln(w, "| protocol | scenario | framework | RPS, median (range) | req/server-CPU-s | server cores busy | loader busy | p99 | errors |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|")
	keys := slices.Clone(sd.keys)
	sortKeys(keys)
	for _, k := range keys {
		runs := sd.runs[k]
		if len(runs) == 0 {
			continue
		}
		var rps, perCPU, busy, loader, p99 []float64
		var errs int64
		for _, r := range runs {
			rps = append(rps, r.RPS)
			perCPU = append(perCPU, r.ReqPerServerCPUS)
			if r.ElapsedS > 0 {
				busy = append(busy, r.ServerCPUS/r.ElapsedS)
			}
			loader = append(loader, r.LoaderCPU)
			p99 = append(p99, r.P99Ms)
			errs += r.Errors + r.Non2xx
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s (%s–%s) | %s | %.1f | %.0f %% | %.2f ms | %d |\n",
			k.protocol, k.scenario, k.framework, num(report.Median(rps), 1), num(slices.Min(rps), 1), num(slices.Max(rps), 1),
			num(report.Median(perCPU), 1), report.Median(busy), 100*report.Median(loader), report.Median(p99), errs)
	}
	fmt.Fprintln(w, "\n| protocol | scenario | framework ÷ peer | RPS ratio, median (range) | req/server-CPU-s ratio | rounds |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|")
	for _, m := range mine {
		for _, p := range peers {
			for _, k := range keys {
				if k.framework != m {
					continue
				}
				rr, cr := roundRatios(sd, k, scaleKey{p, k.scenario, k.protocol})
				if len(rr) == 0 {
					continue
				}
				fmt.Fprintf(w, "| %s | %s | %s ÷ %s | %s | %s | %d |\n", k.protocol, k.scenario, m, p, spread(rr), spread(cr), len(rr))
			}
		}
	}
}

// roundRatios divides a's RPS and req per server CPU-s by b's in every round
// both were measured in.
func roundRatios(sd *side, a, b scaleKey) (rps, perCPU []float64) {
	for at, x := range sd.at[a] {
		y, ok := sd.at[b][at]
		if !ok || y.RPS <= 0 {
			continue
		}
		rps = append(rps, x.RPS/y.RPS)
		if y.ReqPerServerCPUS > 0 {
			perCPU = append(perCPU, x.ReqPerServerCPUS/y.ReqPerServerCPUS)
		}
	}
	return rps, perCPU
}

// spread formats ratios as "median (min–max)", "—" without any.
func spread(v []float64) string {
	if len(v) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", report.Median(v), slices.Min(v), slices.Max(v))
}
