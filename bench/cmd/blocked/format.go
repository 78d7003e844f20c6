package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// blockedCell says how the blocked requests of a measurement ended.
func blockedCell(r result) string {
	if r.Blocked == 0 {
		return "-"
	}
	s := fmt.Sprintf("%d/%d ok, +%s ms", r.BlockedOK, r.Blocked, ms(r.BlockedLag))
	if len(r.BlockedBad) > 0 {
		s += " (" + strings.Join(r.BlockedBad, "; ") + ")"
	}
	return s
}

// formatLine is one measurement as it finishes.
func formatLine(r row) string {
	x := r.res
	line := fmt.Sprintf("round %d %-10s blocked %3d: %8.0f req/s, %8.0f req/CPU-s, p50 %s p90 %s p99 %s max %s ms, loader CPU %.0f%%, blocked: %s",
		r.round, r.demo, r.blocked, x.RPS, x.PerCPU, ms(x.P50), ms(x.P90), ms(x.P99), ms(x.Max), 100*x.LoaderCPU, blockedCell(x))
	if x.Non2xx > 0 || x.Errors > 0 {
		line += fmt.Sprintf(", GET /bench: %d non-2xx, %d errors", x.Non2xx, x.Errors)
	}
	return line
}

// formatTable is every measurement as a Markdown table.
func formatTable(rows []row) string {
	var b strings.Builder
	b.WriteString("| round | demo | blocked | req/s | req/CPU-s | p50 ms | p90 ms | p99 ms | max ms | errors | blocked answers (ok, latest past its wait) |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		x := r.res
		fmt.Fprintf(&b, "| %d | %s | %d | %.0f | %.0f | %s | %s | %s | %s | %d | %s |\n",
			r.round, r.demo, r.blocked, x.RPS, x.PerCPU, ms(x.P50), ms(x.P90), ms(x.P99), ms(x.Max),
			x.Non2xx+x.Errors, blockedCell(x))
	}
	return b.String()
}

// ratio is a/b, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// median of xs (0 for none); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// quiet reports whether a measurement ran undisturbed by other processes: its
// loader kept at least share of its cores busy. On one server core against one
// loader core the Go loader is the slower side, so it runs near 100% unless
// something else takes either core (then the server answers late, the loader
// waits, and its CPU share drops).
func quiet(r result, share float64) bool { return r.LoaderCPU >= share }

// formatRatios compares every demo with base within each round and setting:
// p99, p90 and requests per server CPU-second as ratios (demo / base), with the
// range and median over the rounds, and the p99 ratio once more over the quiet
// rounds only (both measurements quiet).
func formatRatios(rows []row, base string, quietShare float64) string {
	type key struct {
		round, blocked int
		demo           string
	}
	byKey := map[key]result{}
	var demos []string
	var settings []int
	for _, r := range rows {
		byKey[key{r.round, r.blocked, r.demo}] = r.res
		if !slices.Contains(demos, r.demo) {
			demos = append(demos, r.demo)
		}
		if !slices.Contains(settings, r.blocked) {
			settings = append(settings, r.blocked)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ratios to %s within each round (demo / %s): per round, then min-max and median; quiet: the rounds where both loaders kept their core >= %.0f%% busy\n\n",
		base, base, 100*quietShare)
	b.WriteString("| demo | blocked | p99 | p99, quiet rounds | p90 | req/CPU-s |\n|---|---|---|---|---|---|\n")
	for _, d := range demos {
		if d == base {
			continue
		}
		for _, s := range settings {
			var p99, quietP99, p90, cpu []float64
			for _, r := range rows {
				if r.demo != d || r.blocked != s {
					continue
				}
				bx, ok := byKey[key{r.round, s, base}]
				if !ok {
					continue
				}
				x := ratio(float64(r.res.P99), float64(bx.P99))
				p99 = append(p99, x)
				if quiet(r.res, quietShare) && quiet(bx, quietShare) {
					quietP99 = append(quietP99, x)
				}
				p90 = append(p90, ratio(float64(r.res.P90), float64(bx.P90)))
				cpu = append(cpu, ratio(r.res.PerCPU, bx.PerCPU))
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", d, s, summary(p99), summary(quietP99), summary(p90), summary(cpu))
		}
	}
	return b.String()
}

// formatBlockedCost gives each demo's p99 with the blocked requests over its
// p99 without them (the control), per round, and over the quiet rounds.
func formatBlockedCost(rows []row, quietShare float64) string {
	type key struct {
		round, blocked int
		demo           string
	}
	byKey := map[key]result{}
	var demos []string
	blocked := 0
	for _, r := range rows {
		byKey[key{r.round, r.blocked, r.demo}] = r.res
		if !slices.Contains(demos, r.demo) {
			demos = append(demos, r.demo)
		}
		blocked = max(blocked, r.blocked)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "p99 with %d blocked / p99 with none, same demo and round; quiet: both loaders >= %.0f%% busy\n\n", blocked, 100*quietShare)
	b.WriteString("| demo | p99 ratio | quiet rounds |\n|---|---|---|\n")
	for _, d := range demos {
		var all, q []float64
		for _, r := range rows {
			if r.demo != d || r.blocked != blocked || blocked == 0 {
				continue
			}
			c, ok := byKey[key{r.round, 0, d}]
			if !ok {
				continue
			}
			x := ratio(float64(r.res.P99), float64(c.P99))
			all = append(all, x)
			if quiet(r.res, quietShare) && quiet(c, quietShare) {
				q = append(q, x)
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", d, summary(all), summary(q))
	}
	return b.String()
}

// summary lists the ratios in round order, then their range and median.
func summary(xs []float64) string {
	if len(xs) == 0 {
		return "-"
	}
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.2f", x)
	}
	sorted := slices.Clone(xs)
	m := median(sorted)
	return fmt.Sprintf("%s (%.2f-%.2f, median %.2f)", strings.Join(parts, " "), sorted[0], sorted[len(sorted)-1], m)
}
