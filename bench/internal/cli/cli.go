// Package cli parses and validates cmd/bench's flags into a Config. Every
// check happens here, before anything starts, so a bad flag costs nothing:
// the caller prints the error and exits with status 2.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/bench/internal/load"
)

// ExcludeEnv names frameworks to leave out (comma-separated), for local
// runs while a peer cannot build; -exclude does the same.
const ExcludeEnv = "CELERIS_BENCH_EXCLUDE"

// ErrHelp is returned for -h/-help: the usage was printed, exit 0.
var ErrHelp = flag.ErrHelp

// Config is a validated command line.
type Config struct {
	Frameworks []catalog.Framework
	Scenarios  []catalog.Scenario
	Protocols  []string
	Mode       string
	Rampup     load.RampupConfig
	Conns      int
	Streams    int
	Pipeline   int
	// WSConns are the connection counts of the WebSocket echo scenarios
	// (each one a measurement); WSIdleConns is wsidle's.
	WSConns     []int
	WSIdleConns int
	Duration    time.Duration
	Warmup      time.Duration
	Rounds      int
	// ServerCPUs and LoaderCPUs are taskset lists; empty means no pinning.
	ServerCPUs  string
	LoaderCPUs  string
	ServerProcs int
	Out         string
	CPUProfile  string // directory, "" for none
	MemProfile  string // directory, "" for none
	LoaderProf  string // file for the load generator's own CPU profile
	BenchDir    string // bench module directory, "" to find it
	// BinDir holds prebuilt servers (a bundle from bench/scripts/bundle.sh):
	// the suite then builds nothing and never runs the go command. "" means
	// build them with go from the source tree, as usual.
	BinDir       string
	ReadyTimeout time.Duration
	Progress     string // auto, on or off
	Excluded     []string
	Args         []string // the command line, for the report
}

// defaultCPUs pins the server to CPU 0 and the loader to the rest; a
// one-CPU machine is not pinned.
func defaultCPUs() (server, loader string) {
	n := runtime.NumCPU()
	switch {
	case n < 2:
		return "", ""
	case n == 2:
		return "0", "1"
	default:
		return "0", "1-" + strconv.Itoa(n-1)
	}
}

var cpuList = regexp.MustCompile(`^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$`)

// Parse parses args (without the program name). Usage and flag-package
// errors go to stderr; the returned error is the message to print.
func Parse(args []string, stderr io.Writer) (*Config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	srvCPUs, ldrCPUs := defaultCPUs()
	var (
		frameworks = fs.String("frameworks", strings.Join(catalog.FrameworkNames(), ","), "comma-separated frameworks, or all")
		scenarios  = fs.String("scenarios", strings.Join(catalog.ScenarioNames(), ","), "comma-separated scenarios, or all")
		protocols  = fs.String("protocols", "h1,h2c", "comma-separated protocols (h1, h2c, h1tls, h2tls, h3, ws), or all")
		wsConns    = fs.String("ws-conns", "1,100,10000", "ws: comma-separated connection counts; each echo scenario is measured at each")
		exclude    = fs.String("exclude", os.Getenv(ExcludeEnv), "comma-separated frameworks to leave out (default $"+ExcludeEnv+")")
		c          = &Config{Args: append([]string(nil), args...)}
	)
	fs.StringVar(&c.Mode, "mode", load.ModeRampup, "rampup or fixed")
	fs.IntVar(&c.Rampup.Start, "start", 4, "rampup: clients at the start")
	fs.IntVar(&c.Rampup.Step, "step", 4, "rampup: clients added every interval")
	fs.DurationVar(&c.Rampup.Interval, "interval", 100*time.Millisecond, "rampup: interval between steps")
	fs.DurationVar(&c.Rampup.P95Limit, "p95-limit", 150*time.Millisecond, "rampup: stop when an interval's p95 exceeds this")
	fs.DurationVar(&c.Rampup.MaxDuration, "max-duration", 15*time.Second, "rampup: stop after this long")
	fs.IntVar(&c.Rampup.MaxClients, "max-clients", 0, "rampup: stop at this many clients (0: no limit)")
	fs.IntVar(&c.Conns, "conns", 16, "fixed: connections")
	fs.IntVar(&c.Streams, "streams", 4, "h2c and h2tls: concurrent streams (clients) per connection")
	fs.IntVar(&c.Pipeline, "pipeline", 1, "h1 and h1tls: requests written at once per connection")
	fs.IntVar(&c.WSIdleConns, "ws-idle-conns", 10000, "ws: idle connections of the wsidle scenario")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "fixed: measured time")
	fs.DurationVar(&c.Warmup, "warmup", time.Second, "load before measuring, not counted")
	fs.IntVar(&c.Rounds, "rounds", 1, "interleaved rounds; the report takes medians")
	fs.StringVar(&c.ServerCPUs, "server-cpus", srvCPUs, "taskset CPU list for servers (empty: no pinning)")
	fs.StringVar(&c.LoaderCPUs, "loader-cpus", ldrCPUs, "taskset CPU list for the load generator (empty: no pinning)")
	fs.IntVar(&c.ServerProcs, "server-procs", 1, "GOMAXPROCS of the servers")
	fs.StringVar(&c.Out, "out", "results", "output directory")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "directory for server CPU profiles (Go peers; celeris if its demo accepts -cpuprofile)")
	fs.StringVar(&c.MemProfile, "memprofile", "", "directory for server heap profiles (idem)")
	fs.StringVar(&c.LoaderProf, "loader-cpuprofile", "", "write the load generator's own CPU profile to this file")
	fs.StringVar(&c.BenchDir, "bench-dir", "", "the bench module directory (default: found from the working directory)")
	fs.StringVar(&c.BinDir, "bin-dir", "", "use the prebuilt servers in this directory (a bundle from scripts/bundle.sh) instead of building them with go")
	fs.DurationVar(&c.ReadyTimeout, "ready-timeout", 15*time.Second, "how long a server may take to answer GET /bench")
	fs.StringVar(&c.Progress, "progress", "auto", "live progress line: auto (on a terminal), on or off")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./cmd/bench [flags]   (from a bundle: ./bench -bin-dir . [flags]; ./bench scaling -h; ./bench peers -h)\n\nframeworks: %s\nscenarios:  %s\nprotocols:  h1, h2c, h1tls, h2tls, ws\n\nflags:\n",
			strings.Join(catalog.FrameworkNames(), ", "), strings.Join(catalog.ScenarioNames(), ", "))
		fs.PrintDefaults()
	}
	if err := ParseFlags(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, ErrHelp
		}
		return nil, err
	}
	if err := c.resolve(*frameworks, *scenarios, *protocols, *exclude); err != nil {
		return nil, err
	}
	wc, err := counts("-ws-conns", *wsConns)
	if err != nil {
		return nil, err
	}
	c.WSConns = wc
	return c, c.anything()
}

// counts parses a comma-separated list of positive integers.
// ParseFlags parses args into fs; the bench commands take flags only, so an
// argument left over is an error.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags only)", fs.Arg(0))
	}
	return nil
}

func counts(flagName, list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a count >= 1", flagName, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: empty list", flagName)
	}
	return out, nil
}

// anything checks that some framework, scenario and protocol go together
// (HTTP scenarios run over h1, h2c, h1tls, h2tls and h3, ws ones over ws; WebSocket peers
// only over ws).
func (c *Config) anything() error {
	for _, p := range c.Protocols {
		for _, sc := range c.Scenarios {
			for _, f := range c.Frameworks {
				if sc.For(p) && f.Relevant(p) {
					return nil
				}
			}
		}
	}
	return errors.New("nothing to measure: no framework, scenario and protocol go together " +
		"(ws scenarios run over -protocols ws, the others over h1, h2c, h1tls, h2tls and h3; the WebSocket peers speak ws only, quicgo h3 only)")
}

// resolve turns the list flags into catalog entries and checks every value.
func (c *Config) resolve(frameworks, scenarios, protocols, exclude string) error {
	var err error
	excluded, err := names("-exclude", exclude, catalog.FrameworkNames(), true)
	if err != nil {
		return err
	}
	c.Excluded = excluded
	fwNames, err := names("-frameworks", frameworks, catalog.FrameworkNames(), false)
	if err != nil {
		return err
	}
	for _, n := range fwNames {
		if !contains(excluded, n) {
			f, _ := catalog.LookupFramework(n)
			c.Frameworks = append(c.Frameworks, f)
		}
	}
	if len(c.Frameworks) == 0 {
		return errors.New("-frameworks: every framework is excluded")
	}
	scNames, err := names("-scenarios", scenarios, catalog.ScenarioNames(), false)
	if err != nil {
		return err
	}
	for _, n := range scNames {
		s, _ := catalog.LookupScenario(n)
		c.Scenarios = append(c.Scenarios, s)
	}
	if c.Protocols, err = names("-protocols", protocols, catalog.Protocols, false); err != nil {
		return err
	}
	if c.Mode != load.ModeRampup && c.Mode != load.ModeFixed {
		return fmt.Errorf("-mode: unknown mode %q (want rampup or fixed)", c.Mode)
	}
	if c.Progress != "auto" && c.Progress != "on" && c.Progress != "off" {
		return fmt.Errorf("-progress: %q is not auto, on or off", c.Progress)
	}
	for _, chk := range []struct {
		name string
		v    int
		min  int
	}{
		{"-start", c.Rampup.Start, 1}, {"-step", c.Rampup.Step, 1}, {"-max-clients", c.Rampup.MaxClients, 0},
		{"-conns", c.Conns, 1}, {"-streams", c.Streams, 1}, {"-pipeline", c.Pipeline, 1},
		{"-rounds", c.Rounds, 1}, {"-server-procs", c.ServerProcs, 1}, {"-ws-idle-conns", c.WSIdleConns, 1},
	} {
		if chk.v < chk.min {
			return fmt.Errorf("%s: %d is out of range (must be >= %d)", chk.name, chk.v, chk.min)
		}
	}
	for _, chk := range []struct {
		name string
		v    time.Duration
		zero bool // zero allowed
	}{
		{"-interval", c.Rampup.Interval, false}, {"-p95-limit", c.Rampup.P95Limit, false},
		{"-max-duration", c.Rampup.MaxDuration, false}, {"-duration", c.Duration, false},
		{"-warmup", c.Warmup, true}, {"-ready-timeout", c.ReadyTimeout, false},
	} {
		if chk.v < 0 || (chk.v == 0 && !chk.zero) {
			return fmt.Errorf("%s: %v is out of range (must be > 0%s)", chk.name, chk.v, map[bool]string{true: " or 0"}[chk.zero])
		}
	}
	for _, chk := range []struct{ name, v string }{{"-server-cpus", c.ServerCPUs}, {"-loader-cpus", c.LoaderCPUs}} {
		if chk.v != "" && !cpuList.MatchString(chk.v) {
			return fmt.Errorf("%s: %q is not a CPU list like 0 or 1-3,5", chk.name, chk.v)
		}
	}
	if c.Out == "" {
		return errors.New("-out: empty output directory")
	}
	if c.BinDir != "" {
		if c.BenchDir != "" {
			return errors.New("-bin-dir and -bench-dir exclude each other: prebuilt servers need no source tree")
		}
		if st, err := os.Stat(c.BinDir); err != nil {
			return fmt.Errorf("-bin-dir: %v", err)
		} else if !st.IsDir() {
			return fmt.Errorf("-bin-dir: %s is not a directory", c.BinDir)
		}
	}
	return nil
}

// names splits a comma-separated list, expands "all", rejects unknown and
// repeated names, and keeps the catalog's order.
func names(flagName, list string, known []string, emptyOK bool) ([]string, error) {
	var picked []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == "":
			continue
		case n == "all":
			picked = append(picked, known...)
		case !contains(known, n):
			return nil, fmt.Errorf("%s: unknown name %q (known: %s)", flagName, n, strings.Join(known, ", "))
		default:
			picked = append(picked, n)
		}
	}
	if len(picked) == 0 && !emptyOK {
		return nil, fmt.Errorf("%s: empty list", flagName)
	}
	var out []string
	for _, k := range known {
		if contains(picked, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
