// Package suite runs the benchmark. Life of a run: find the bench module
// (and the repository root above it), pin this process to the loader CPUs
// with taskset, build bench/cmd/peer and the repository's cmd/demo once into
// a temporary directory (or, with -bin-dir, take them prebuilt from a
// bundle, needing neither the go command nor the source tree), then for
// each round, scenario, protocol and framework in turn (so rounds
// interleave A B C A B C): start a fresh server process pinned to the
// server CPUs with GOMAXPROCS set, wait until it answers GET /bench, check
// it gives the scenario's expected answer, measure it with the load package
// while reading its CPU time from /proc, stop it with SIGTERM (the peers
// then write profiles) and record the run. A server that fails to build,
// start or answer is recorded as failed and the run goes on. Reports are
// written at the end, also after an interrupt.
package suite

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/bench/internal/cli"
	"github.com/celeris-dev/celeris/bench/internal/host"
	"github.com/celeris-dev/celeris/bench/internal/load"
	"github.com/celeris-dev/celeris/bench/internal/report"
)

// stopGrace is how long a server may take to stop after SIGTERM.
const stopGrace = 5 * time.Second

// Suite is one benchmark run; its fields are owned by the Run goroutine.
type Suite struct {
	cfg    *cli.Config
	con    *console
	pin    pinning
	rep    *report.Report
	logDir string

	peerBin, demoBin string
	peerErr, demoErr error // build failures
	demoFlags        demoFlags
	said             map[string]bool
}

// Run runs the whole suite and writes the reports into cfg.Out. It returns
// the report and the files written; an error means nothing could be
// measured at all (no bench module, no output directory).
func Run(ctx context.Context, cfg *cli.Config, stdout io.Writer) (*report.Report, []string, error) {
	var benchDir string
	if cfg.BinDir == "" {
		var err error
		if benchDir, err = findBenchDir(cfg.BenchDir); err != nil {
			return nil, nil, err
		}
	}
	s := &Suite{cfg: cfg, con: newConsole(stdout, cfg.Progress), said: map[string]bool{}}
	s.logDir = filepath.Join(cfg.Out, "logs")
	if err := os.MkdirAll(s.logDir, 0o755); err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "celeris-bench-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)

	s.pin = setupPinning(cfg.ServerCPUs, cfg.LoaderCPUs)
	s.rep = &report.Report{Meta: s.meta()}
	for _, n := range s.pin.notes {
		s.note(n)
	}
	if cfg.BinDir != "" {
		s.prebuilt(ctx, cfg.BinDir)
	} else {
		s.build(ctx, benchDir, tmp)
	}
	s.prepareProfiles()

	s.loop(ctx)
	files, err := report.WriteAll(cfg.Out, s.rep)
	if err == nil {
		os.Remove(s.logDir) // only if empty: logs are kept for failed servers
	}
	return s.rep, files, err
}

// note records a run-wide remark and prints it.
func (s *Suite) note(n string) {
	s.rep.Notes = append(s.rep.Notes, n)
	s.con.printf("note: %s", n)
}

func (s *Suite) meta() report.Meta {
	c := s.cfg
	set := map[string]string{
		"warmup":              c.Warmup.String(),
		"server GOMAXPROCS":   strconv.Itoa(c.ServerProcs),
		"server CPUs":         orNone(s.pin.server),
		"loader CPUs":         orNone(s.pin.loader),
		"loader GOMAXPROCS":   strconv.Itoa(runtime.GOMAXPROCS(0)),
		"h2c streams per con": strconv.Itoa(c.Streams),
		"h1 pipeline depth":   strconv.Itoa(c.Pipeline),
		"servers":             "built with go from the source tree",
	}
	if c.BinDir != "" {
		set["servers"] = "prebuilt in " + c.BinDir
	}
	if c.Mode == load.ModeRampup {
		set["rampup"] = fmt.Sprintf("start %d, +%d every %v, until p95 > %v or %v",
			c.Rampup.Start, c.Rampup.Step, c.Rampup.Interval, c.Rampup.P95Limit, c.Rampup.MaxDuration)
	} else {
		set["fixed"] = fmt.Sprintf("%d connections for %v", c.Conns, c.Duration)
	}
	m := report.Meta{
		Started:     time.Now(),
		GoVersion:   runtime.Version(),
		OSArch:      runtime.GOOS + "/" + runtime.GOARCH,
		CPUs:        runtime.NumCPU(),
		Mode:        c.Mode,
		Rounds:      c.Rounds,
		Baseline:    catalog.Baseline,
		Settings:    set,
		Protocols:   c.Protocols,
		CommandLine: c.Args,
	}
	for _, f := range c.Frameworks {
		m.Frameworks = append(m.Frameworks, f.Name)
	}
	for _, sc := range c.Scenarios {
		for _, n := range s.connCounts(sc) {
			m.Scenarios = append(m.Scenarios, label(sc, n))
		}
	}
	if slices.Contains(c.Protocols, catalog.WS) {
		set["ws"] = fmt.Sprintf("echo at %v connections for %v each (fixed), idle: %d connections",
			c.WSConns, c.Duration, c.WSIdleConns)
	}
	return m
}

func orNone(s string) string {
	if s == "" {
		return "not pinned"
	}
	return s
}

// build compiles bench/cmd/peer and the repository's cmd/demo (in its own
// module, with its go.mod, exactly as users build it) when needed.
func (s *Suite) build(ctx context.Context, benchDir, tmp string) {
	needPeer, needDemo := s.needs()
	if needPeer {
		s.peerBin = filepath.Join(tmp, "peer")
		s.con.printf("building bench/cmd/peer ...")
		if s.peerErr = goBuild(ctx, benchDir, s.peerBin, "./cmd/peer"); s.peerErr != nil {
			s.note("peer build failed: " + s.peerErr.Error())
		}
	}
	if needDemo {
		s.demoBin = filepath.Join(tmp, "celeris-demo")
		root := filepath.Dir(benchDir)
		s.con.printf("building cmd/demo (celeris) ...")
		if s.demoErr = goBuild(ctx, filepath.Join(root, "cmd", "demo"), s.demoBin, "."); s.demoErr != nil {
			s.note("celeris demo build failed: " + s.demoErr.Error())
			return
		}
		s.demoFlags = probeDemoFlags(ctx, s.demoBin)
	}
}

// Names of the prebuilt servers in a -bin-dir directory, as
// bench/scripts/bundle.sh writes them.
const (
	PeerBinary = "peer"
	DemoBinary = "demo"
)

// prebuilt takes the servers from dir (a bundle) instead of building them:
// no go command, no source tree. A missing or non-executable binary fails
// the rows that need it, like a failed build.
func (s *Suite) prebuilt(ctx context.Context, dir string) {
	needPeer, needDemo := s.needs()
	if needPeer {
		if s.peerBin, s.peerErr = executable(dir, PeerBinary); s.peerErr != nil {
			s.note("peer: " + s.peerErr.Error())
		}
	}
	if needDemo {
		if s.demoBin, s.demoErr = executable(dir, DemoBinary); s.demoErr != nil {
			s.note("celeris demo: " + s.demoErr.Error())
			return
		}
		s.demoFlags = probeDemoFlags(ctx, s.demoBin)
	}
}

// executable returns dir/name as an absolute path if it is an executable
// regular file.
func executable(dir, name string) (string, error) {
	p, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return "", fmt.Errorf("no prebuilt %s: %v (make the bundle with bench/scripts/bundle.sh)", name, err)
	case !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0:
		return "", fmt.Errorf("prebuilt %s is not an executable file", p)
	}
	return p, nil
}

// needs says whether the frameworks of the run need bench/cmd/peer and the
// celeris demo.
func (s *Suite) needs() (peer, demo bool) {
	for _, f := range s.cfg.Frameworks {
		peer = peer || !f.Demo
		demo = demo || f.Demo
	}
	return peer, demo
}

// demoFlags records which optional flags the demo accepts.
type demoFlags struct {
	cpuProfile bool // -cpuprofile FILE
	memProfile bool // -memprofile FILE
	loops      bool // -loops N (event loops): set to -server-procs
	bare       bool // -bare (no middleware): passed for ws, whose handshake is all it would touch
}

// probeDemoFlags runs "celeris-demo -h" and looks for the optional flags.
func probeDemoFlags(ctx context.Context, bin string) demoFlags {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, _ := execOutput(ctx, bin, "-h")
	return demoFlags{
		cpuProfile: strings.Contains(out, "-cpuprofile"),
		memProfile: strings.Contains(out, "-memprofile"),
		loops:      strings.Contains(out, "-loops"),
		bare:       strings.Contains(out, "-bare"),
	}
}

func (s *Suite) prepareProfiles() {
	for _, d := range []string{s.cfg.CPUProfile, s.cfg.MemProfile} {
		if d != "" {
			if err := os.MkdirAll(d, 0o755); err != nil {
				s.note(fmt.Sprintf("profile directory %s: %v: no profiles", d, err))
			}
		}
	}
	if s.demoBin != "" && s.demoErr == nil {
		if s.cfg.CPUProfile != "" && !s.demoFlags.cpuProfile {
			s.note("celeris: the demo does not accept -cpuprofile; no CPU profile collected for it")
		}
		if s.cfg.MemProfile != "" && !s.demoFlags.memProfile {
			s.note("celeris: the demo does not accept -memprofile; no heap profile collected for it")
		}
	}
}

// loop measures everything, rounds outermost and frameworks innermost. A
// scenario runs over its own protocols only (HTTP over h1 and h2c, ws over
// ws), a framework only over the protocols it is Relevant to; a ws echo
// scenario runs once per -ws-conns count.
func (s *Suite) loop(ctx context.Context) {
	for round := 1; round <= s.cfg.Rounds; round++ {
		for _, sc := range s.cfg.Scenarios {
			for _, proto := range s.cfg.Protocols {
				if !sc.For(proto) {
					continue
				}
				for _, conns := range s.connCounts(sc) {
					for _, fw := range s.cfg.Frameworks {
						if !fw.Relevant(proto) {
							continue
						}
						if ctx.Err() != nil {
							s.note("interrupted: the reports hold what was measured")
							return
						}
						s.measure(ctx, round, fw, sc, proto, conns)
					}
				}
			}
		}
	}
}

// connCounts returns the connection counts a scenario is measured at: 0
// (the mode's own) for HTTP.
func (s *Suite) connCounts(sc catalog.Scenario) []int {
	switch {
	case sc.Proto != catalog.WS:
		return []int{0}
	case sc.Idle:
		return []int{s.cfg.WSIdleConns}
	}
	return s.cfg.WSConns
}

// label is a scenario's name in the reports: with its connection count for
// ws (ws64-c100), so that every count gets its own table.
func label(sc catalog.Scenario, conns int) string {
	if conns == 0 {
		return sc.Name
	}
	return sc.Name + "-c" + strconv.Itoa(conns)
}

// serverCommand returns the argv for a framework's server, or why it has none.
func (s *Suite) serverCommand(fw catalog.Framework, proto, addr, tag string) ([]string, error) {
	cpuProf, memProf := "", ""
	if s.cfg.CPUProfile != "" {
		cpuProf = filepath.Join(s.cfg.CPUProfile, tag+".cpu.pprof")
	}
	if s.cfg.MemProfile != "" {
		memProf = filepath.Join(s.cfg.MemProfile, tag+".mem.pprof")
	}
	if fw.Demo {
		if s.demoErr != nil {
			return nil, fmt.Errorf("no celeris demo: %s", firstLine(s.demoErr))
		}
		args := []string{"-addr", addr}
		if catalog.IsTLS(proto) || proto == catalog.H3 {
			// The demo serves plaintext on -addr too (idle here) and TLS,
			// with a self-signed certificate made at start, on -tls-addr,
			// and HTTP/3 on the UDP port of the same number.
			plain, err := host.FreeAddr()
			if err != nil {
				return nil, err
			}
			args = []string{"-addr", plain, "-tls-addr", addr}
		}
		if fw.Engine != "" {
			args = append(args, "-engine", fw.Engine)
		}
		if fw.Inline {
			args = append(args, "-inline")
		}
		if fw.Workers {
			args = append(args, "-workers")
		}
		if proto == catalog.WS && s.demoFlags.bare {
			args = append(args, "-bare")
		}
		if s.demoFlags.loops {
			args = append(args, "-loops", strconv.Itoa(s.cfg.ServerProcs))
		}
		if cpuProf != "" && s.demoFlags.cpuProfile {
			args = append(args, "-cpuprofile", cpuProf)
		}
		if memProf != "" && s.demoFlags.memProfile {
			args = append(args, "-memprofile", memProf)
		}
		return s.pin.command(s.demoBin, args...), nil
	}
	if s.peerErr != nil {
		return nil, fmt.Errorf("no bench/cmd/peer: %s", firstLine(s.peerErr))
	}
	args := []string{"-framework", fw.Name, "-addr", addr}
	if catalog.IsTLS(proto) {
		args = append(args, "-tls")
	}
	if cpuProf != "" {
		args = append(args, "-cpuprofile", cpuProf)
	}
	if memProf != "" {
		args = append(args, "-memprofile", memProf)
	}
	return s.pin.command(s.peerBin, args...), nil
}

func firstLine(err error) string {
	first, _, _ := strings.Cut(err.Error(), "\n")
	return first
}
