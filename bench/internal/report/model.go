// Package report holds the suite's results and writes them: results.json
// (everything, every round), results.md (one table per scenario and
// protocol, medians across rounds) and one SVG chart per scenario and
// protocol (RPS and p95 against clients). It does no measuring.
package report

import (
	"slices"
	"sort"
	"time"
)

// Statuses of a Result.
const (
	StatusOK      = "ok"
	StatusSkipped = "skipped"
	StatusFailed  = "failed"
)

// Report is one suite run.
type Report struct {
	Meta    Meta      `json:"meta"`
	Results []*Result `json:"results"`
	// Notes are run-wide remarks (pinning skipped, profiles not collected...).
	Notes []string `json:"notes,omitempty"`
}

// Meta describes the machine and the settings.
type Meta struct {
	Started     time.Time         `json:"started"`
	GoVersion   string            `json:"go_version"`
	OSArch      string            `json:"os_arch"`
	CPUs        int               `json:"cpus"`
	Mode        string            `json:"mode"`
	Rounds      int               `json:"rounds"`
	Baseline    string            `json:"baseline"`
	Settings    map[string]string `json:"settings"`
	Frameworks  []string          `json:"frameworks"`
	Scenarios   []string          `json:"scenarios"`
	Protocols   []string          `json:"protocols"`
	CommandLine []string          `json:"command_line"`
}

// Run is one measurement of one (framework, scenario, protocol) in one round.
type Run struct {
	Round   int     `json:"round"`
	Clients int     `json:"clients"`
	RPS     float64 `json:"rps"`
	P50Ms   float64 `json:"p50_ms"`
	P95Ms   float64 `json:"p95_ms"`
	P99Ms   float64 `json:"p99_ms"`
	MaxMs   float64 `json:"max_ms"`
	// Requests counts 2xx answers over the whole measured window.
	Requests int64   `json:"requests"`
	Non2xx   int64   `json:"non_2xx"`
	Errors   int64   `json:"errors"`
	ElapsedS float64 `json:"elapsed_s"`
	// ServerCPUS is the server process's user+system CPU over the window.
	ServerCPUS       float64 `json:"server_cpu_s"`
	ReqPerServerCPUS float64 `json:"req_per_server_cpu_s"`
	LoaderCPU        float64 `json:"loader_cpu_share"`
	// OtherCPU is how many cores other processes kept busy on average
	// (system busy time minus server and loader), a noise gauge.
	OtherCPU float64 `json:"other_cpu_cores"`
	// RSSBytes is the server's resident set at the end of the window (ws);
	// RSSBaseBytes before its connections were opened (wsidle).
	RSSBytes     int64    `json:"rss_bytes,omitempty"`
	RSSBaseBytes int64    `json:"rss_base_bytes,omitempty"`
	StopReason   string   `json:"stop_reason,omitempty"`
	Warnings     []string `json:"warnings,omitempty"`
	Series       []Point  `json:"series"`
}

// Point is one interval: load and what it measured.
type Point struct {
	Clients int     `json:"clients"`
	RPS     float64 `json:"rps"`
	P95Ms   float64 `json:"p95_ms"`
}

// Result gathers every round of one (framework, scenario, protocol).
type Result struct {
	Framework string `json:"framework"`
	Scenario  string `json:"scenario"`
	Protocol  string `json:"protocol"`
	Status    string `json:"status"`
	// Notes say why it was skipped or failed, per round.
	Notes []string `json:"notes,omitempty"`
	Runs  []Run    `json:"runs,omitempty"`
	// Median is the run with the median RPS, except ReqPerServerCPUS,
	// which is the median of its own; nil until Summarize.
	Median *Run `json:"median,omitempty"`
	// Ratio is Median.RPS over the baseline's (0 when unknown).
	Ratio float64 `json:"ratio_to_baseline,omitempty"`
	// CPURatio is Median.ReqPerServerCPUS over the baseline's (0 when unknown).
	CPURatio float64 `json:"cpu_ratio_to_baseline,omitempty"`
}

// Find returns the result for a key, or nil.
func (r *Report) Find(framework, scenario, protocol string) *Result {
	for _, res := range r.Results {
		if res.Framework == framework && res.Scenario == scenario && res.Protocol == protocol {
			return res
		}
	}
	return nil
}

// Get returns the result for a key, adding it (status failed until a run
// lands) if missing.
func (r *Report) Get(framework, scenario, protocol string) *Result {
	if res := r.Find(framework, scenario, protocol); res != nil {
		return res
	}
	res := &Result{Framework: framework, Scenario: scenario, Protocol: protocol, Status: StatusFailed}
	r.Results = append(r.Results, res)
	return res
}

// AddRun records a successful measurement.
func (res *Result) AddRun(run Run) {
	res.Runs = append(res.Runs, run)
	res.Status = StatusOK
}

// AddNote records why a round produced nothing, once per distinct note.
func (res *Result) AddNote(note string) {
	if !slices.Contains(res.Notes, note) {
		res.Notes = append(res.Notes, note)
	}
}

// Summarize computes every result's median and its ratio to baseline.
func (r *Report) Summarize() {
	for _, res := range r.Results {
		res.Median = median(res.Runs)
	}
	for _, res := range r.Results {
		res.Ratio, res.CPURatio = 0, 0
		base := r.Find(r.Meta.Baseline, res.Scenario, res.Protocol)
		if res.Median == nil || base == nil || base.Median == nil {
			continue
		}
		if base.Median.RPS > 0 {
			res.Ratio = res.Median.RPS / base.Median.RPS
		}
		if base.Median.ReqPerServerCPUS > 0 {
			res.CPURatio = res.Median.ReqPerServerCPUS / base.Median.ReqPerServerCPUS
		}
	}
}

// median returns a copy of the run with the median RPS (the lower middle
// for an even count) whose ReqPerServerCPUS, RSSBytes and RSSBaseBytes are
// the medians of their own across rounds.
func median(runs []Run) *Run {
	if len(runs) == 0 {
		return nil
	}
	idx := make([]int, len(runs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return runs[idx[a]].RPS < runs[idx[b]].RPS })
	m := runs[idx[(len(runs)-1)/2]]
	var eff, rss, base []float64
	for _, run := range runs {
		eff = append(eff, run.ReqPerServerCPUS)
		rss = append(rss, float64(run.RSSBytes))
		base = append(base, float64(run.RSSBaseBytes))
	}
	m.ReqPerServerCPUS = Median(eff)
	m.RSSBytes, m.RSSBaseBytes = int64(Median(rss)), int64(Median(base))
	return &m
}

// Median is the median of v (0 for none); v is not changed.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
