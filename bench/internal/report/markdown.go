package report

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// WriteMarkdown writes results.md: a header describing the run, then one
// table per scenario and protocol (in Meta order), then the notes.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b strings.Builder
	m := r.Meta
	fmt.Fprintf(&b, "# Benchmark results\n\n")
	fmt.Fprintf(&b, "- started: %s\n", m.Started.UTC().Format("2006-01-02 15:04:05 MST"))
	fmt.Fprintf(&b, "- machine: %s, %d CPUs, %s\n", m.OSArch, m.CPUs, m.GoVersion)
	fmt.Fprintf(&b, "- mode: %s, rounds: %d (medians across rounds)\n", m.Mode, m.Rounds)
	for _, k := range sortedKeys(m.Settings) {
		fmt.Fprintf(&b, "- %s: %s\n", k, m.Settings[k])
	}
	clients, rps, p95 := "max clients", "max RPS", "p95 at max"
	if m.Mode == "fixed" {
		clients, rps, p95 = "clients", "RPS", "p95"
	}
	for _, sc := range m.Scenarios {
		for _, proto := range m.Protocols {
			rows := r.rows(sc, proto)
			if len(rows) == 0 {
				continue
			}
			if proto == "ws" {
				writeWSTable(&b, sc, rows, m.Baseline)
				continue
			}
			fmt.Fprintf(&b, "\n## %s — %s\n\n", sc, proto)
			fmt.Fprintf(&b, "| framework | %s | %s | %s | req per server CPU-s | ratio to %s | errors / non-2xx |\n",
				clients, rps, p95, m.Baseline)
			b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
			for _, res := range rows {
				b.WriteString(row(res))
			}
		}
	}
	notes := r.allNotes()
	if len(notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rows returns the results of one table in framework order.
func (r *Report) rows(scenario, protocol string) []*Result {
	var out []*Result
	for _, fw := range r.Meta.Frameworks {
		if res := r.Find(fw, scenario, protocol); res != nil {
			out = append(out, res)
		}
	}
	return out
}

func row(res *Result) string {
	if res.Median == nil {
		why := res.Status
		if len(res.Notes) > 0 {
			why += ": " + strings.Join(res.Notes, "; ")
		}
		return fmt.Sprintf("| %s | — | — | — | — | — | %s |\n", res.Framework, escapeCell(why))
	}
	m := res.Median
	ratio := "—"
	if res.Ratio > 0 {
		ratio = strconv.FormatFloat(res.Ratio, 'f', 2, 64)
	}
	eff := "—"
	if m.ReqPerServerCPUS > 0 {
		eff = Thousands(m.ReqPerServerCPUS)
	}
	return fmt.Sprintf("| %s | %d | %s | %s | %s | %s | %d / %d |\n",
		res.Framework, m.Clients, Thousands(m.RPS), FormatMs(m.P95Ms), eff, ratio, m.Errors, m.Non2xx)
}

// allNotes lists every result's warnings and notes, prefixed with its key,
// after the run-wide notes.
func (r *Report) allNotes() []string {
	out := append([]string(nil), r.Notes...)
	for _, res := range r.Results {
		key := res.Framework + " " + res.Scenario + " " + res.Protocol
		if res.Median != nil {
			for _, n := range res.Notes {
				out = append(out, key+": "+n)
			}
		}
		for _, run := range res.Runs {
			for _, wn := range run.Warnings {
				out = append(out, fmt.Sprintf("%s round %d: %s", key, run.Round, wn))
			}
		}
	}
	return out
}

// Thousands formats a rate rounded to an integer with comma separators.
func Thousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// FormatMs formats a latency in milliseconds with useful precision.
func FormatMs(ms float64) string {
	switch {
	case ms >= 100:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	case ms >= 10:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	default:
		return strconv.FormatFloat(ms, 'f', 2, 64) + " ms"
	}
}

func escapeCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// writeWSTable writes a WebSocket table: an echo (round trips, per server
// CPU-second, RSS at the end of the window) or, for an idle scenario (no
// round trips in the window), the server's memory before and with the idle
// connections.
func writeWSTable(b *strings.Builder, sc string, rows []*Result, baseline string) {
	idle := strings.HasPrefix(sc, "wsidle")
	fmt.Fprintf(b, "\n## %s — ws\n\n", sc)
	if idle {
		b.WriteString("| framework | idle connections | RSS before | RSS with them | per connection | server CPU while idle | failed connections |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|\n")
	} else {
		fmt.Fprintf(b, "| framework | connections | round trips/s | p50 | p95 | round trips per server CPU-s | per CPU-s, ratio to %s | RSS at end | failed connections |\n", baseline)
		b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	}
	for _, res := range rows {
		m := res.Median
		if m == nil {
			why := res.Status
			if len(res.Notes) > 0 {
				why += ": " + strings.Join(res.Notes, "; ")
			}
			if idle {
				fmt.Fprintf(b, "| %s | — | — | — | — | — | %s |\n", res.Framework, escapeCell(why))
			} else {
				fmt.Fprintf(b, "| %s | — | — | — | — | — | — | — | %s |\n", res.Framework, escapeCell(why))
			}
			continue
		}
		if idle {
			per := "—"
			if m.Clients > 0 && m.RSSBytes > 0 {
				per = strconv.FormatFloat(float64(m.RSSBytes-m.RSSBaseBytes)/float64(m.Clients)/1024, 'f', 1, 64) + " KiB"
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %d |\n", res.Framework, Thousands(float64(m.Clients)),
				MB(m.RSSBaseBytes), MB(m.RSSBytes), per, strconv.FormatFloat(m.ServerCPUS, 'f', 2, 64)+" s", m.Errors)
			continue
		}
		eff, ratio := "—", "—"
		if m.ReqPerServerCPUS > 0 {
			eff = Thousands(m.ReqPerServerCPUS)
		}
		if res.CPURatio > 0 {
			ratio = strconv.FormatFloat(res.CPURatio, 'f', 2, 64)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s | %d |\n", res.Framework, Thousands(float64(m.Clients)),
			Thousands(m.RPS), FormatMs(m.P50Ms), FormatMs(m.P95Ms), eff, ratio, MB(m.RSSBytes), m.Errors)
	}
}

// MB formats a byte count in megabytes (1 MB = 10^6 bytes), "—" for zero.
func MB(n int64) string {
	if n <= 0 {
		return "—"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + " MB"
}
