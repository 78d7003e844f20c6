package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ChartFor builds the chart of one scenario and protocol from each
// framework's median run: RPS and p95 against clients.
func (r *Report) ChartFor(scenario, protocol string) (Chart, bool) {
	rps := Panel{YLabel: "requests per second"}
	p95 := Panel{YLabel: "p95 latency (ms)"}
	for _, res := range r.rows(scenario, protocol) {
		if res.Median == nil {
			continue
		}
		a := Line{Name: res.Framework}
		b := Line{Name: res.Framework}
		for _, pt := range res.Median.Series {
			a.Points = append(a.Points, XY{X: float64(pt.Clients), Y: pt.RPS})
			b.Points = append(b.Points, XY{X: float64(pt.Clients), Y: pt.P95Ms})
		}
		rps.Lines = append(rps.Lines, a)
		p95.Lines = append(p95.Lines, b)
	}
	if len(rps.Lines) == 0 {
		return Chart{}, false
	}
	return Chart{
		Title:  fmt.Sprintf("%s — %s (%s, median of %d round(s))", scenario, protocol, r.Meta.Mode, r.Meta.Rounds),
		XLabel: "concurrent clients",
		Panels: []Panel{rps, p95},
	}, true
}

// WriteAll summarizes r and writes results.json, results.md and one
// <scenario>-<protocol>.svg per table into dir; it returns the paths written.
func WriteAll(dir string, r *Report) ([]string, error) {
	r.Summarize()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var written []string
	put := func(name string, data []byte) error {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
		written = append(written, p)
		return nil
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := put("results.json", append(js, '\n')); err != nil {
		return written, err
	}
	var md bytes.Buffer
	if err := WriteMarkdown(&md, r); err != nil {
		return written, err
	}
	if err := put("results.md", md.Bytes()); err != nil {
		return written, err
	}
	for _, sc := range r.Meta.Scenarios {
		for _, proto := range r.Meta.Protocols {
			c, ok := r.ChartFor(sc, proto)
			if !ok {
				continue
			}
			var svg bytes.Buffer
			if err := WriteSVG(&svg, c); err != nil {
				return written, err
			}
			if err := put(sc+"-"+proto+".svg", svg.Bytes()); err != nil {
				return written, err
			}
		}
	}
	return written, nil
}
