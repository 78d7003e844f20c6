// Command blocked measures what handlers that block cost the requests that do
// not: the latency percentiles and throughput of GET /bench over h2c while 256
// requests (GET /slow) sit in their handlers, against the same load with none
// blocked (the control), on one or more builds of the demo, in interleaved rounds.
//
//	blocked -demo before=/tmp/base,after=.. -rounds 3
//
// Each -demo entry is name=path, path being a demo binary or a source tree
// (a directory with cmd/demo, built once with its own go.mod); the default is
// the tree this bench module belongs to. For every round, every demo and both
// settings (blocked, control) the command starts a fresh demo in its default
// mode (handlers on workers, the default middleware) pinned with taskset to
// -server-cpus with GOMAXPROCS and -loops set to -server-procs, as the bench
// suite does, and pins itself to -loader-cpus. A measurement then:
//
//  1. opens -blocked GET /slow?ms=B requests as h2c streams spread over
//     -blocked-conns connections, B outlasting the warm-up and the window;
//  2. drives GET /bench with -conns h2c connections of -streams clients each
//     (the load package's Pool and HDR recorder) for -warmup, then -duration;
//  3. stops the load and waits for every blocked request, which must be
//     answered 200 "OK" and no earlier than B.
//
// The blocked requests are h2c streams because the worker hand-off under test is
// the one an h2c read feeds (a burst of streams per read), and a blocked stream
// shares its connection and the worker pool with whatever else arrives: 256
// blocked streams hold 256 workers while the GET /bench streams must still find
// free ones at once.
//
// It prints one line per measurement, a table, per round the p99 and
// throughput of every demo relative to the first one under the same setting
// (ratios within a round, since a shared machine drifts between rounds), and
// each demo's p99 with the blocked requests over its p99 without them. The p99
// ratios are given once more over the quiet rounds alone: those where the
// loader kept its core at least -quiet busy (95%) in both measurements
// compared. One Go loader core is slower than one demo core, so an undisturbed
// loader runs near 100%; when another process takes either core, the loader
// waits for answers and its share drops.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/h2client"
	"github.com/celeris-dev/celeris/bench/internal/host"
)

// demoSpec is one -demo entry.
type demoSpec struct {
	Name string
	Path string // a binary, or a source tree with cmd/demo
	bin  string // the binary to run, once built
}

// parseDemos parses "name=path,name=path"; a lone path is named after its base.
func parseDemos(s string) ([]demoSpec, error) {
	var out []demoSpec
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, path, ok := strings.Cut(part, "=")
		if !ok {
			name, path = filepath.Base(part), part
		}
		if name == "" || path == "" {
			return nil, fmt.Errorf("-demo entry %q: want name=path", part)
		}
		if seen[name] {
			return nil, fmt.Errorf("-demo: name %q given twice", name)
		}
		seen[name] = true
		out = append(out, demoSpec{Name: name, Path: path})
	}
	if len(out) == 0 {
		return nil, errors.New("-demo: no demo given")
	}
	return out, nil
}

// options are the command's flags.
type options struct {
	demos                  []demoSpec
	rounds                 int
	control                bool
	cfg                    config // Blocked is the blocked setting's count
	serverCPUs, loaderCPUs string
	serverProcs            int
	profileDir             string
	quietShare             float64
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("blocked", flag.ContinueOnError)
	demos := fs.String("demo", "", "demos to compare, name=path[,name=path...]: a binary or a source tree with cmd/demo (default: this repository)")
	var o options
	fs.IntVar(&o.rounds, "rounds", 3, "interleaved rounds")
	fs.BoolVar(&o.control, "control", true, "also measure every demo with no blocked request")
	fs.IntVar(&o.cfg.Blocked, "blocked", 256, "requests that block (GET /slow) during the load")
	fs.IntVar(&o.cfg.BlockedConns, "blocked-conns", 8, "h2c connections carrying the blocked requests")
	fs.DurationVar(&o.cfg.BlockFor, "block", 0, "how long each blocked request waits (default: warm-up + duration + 1s)")
	fs.IntVar(&o.cfg.Conns, "conns", 16, "h2c connections sending GET /bench")
	fs.IntVar(&o.cfg.Streams, "streams", 32, "concurrent streams (clients) per GET /bench connection")
	fs.DurationVar(&o.cfg.Warmup, "warmup", time.Second, "load before the window")
	fs.DurationVar(&o.cfg.Duration, "duration", 5*time.Second, "measured window")
	fs.StringVar(&o.serverCPUs, "server-cpus", "0", "taskset CPU list of the demo (empty: not pinned)")
	fs.StringVar(&o.loaderCPUs, "loader-cpus", "1", "taskset CPU list of this process (empty: not pinned)")
	fs.IntVar(&o.serverProcs, "server-procs", 1, "the demo's GOMAXPROCS and event loops")
	fs.Float64Var(&o.quietShare, "quiet", 0.95, "share of its cores the loader must keep busy for a measurement to count as quiet (undisturbed)")
	fs.StringVar(&o.profileDir, "profile-dir", "", "write each demo's CPU profile here (name-setting-round.pprof)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *demos == "" {
		root, err := repoRoot()
		if err != nil {
			return o, err
		}
		*demos = "celeris=" + root
	}
	var err error
	if o.demos, err = parseDemos(*demos); err != nil {
		return o, err
	}
	if o.cfg.BlockFor == 0 {
		o.cfg.BlockFor = o.cfg.Warmup + o.cfg.Duration + time.Second
	}
	if o.rounds < 1 || o.serverProcs < 1 {
		return o, errors.New("-rounds and -server-procs must be >= 1")
	}
	if o.quietShare <= 0 || o.quietShare > 1 {
		return o, errors.New("-quiet must be in (0, 1]")
	}
	if o.cfg.Blocked < 1 {
		return o, errors.New("-blocked must be >= 1 (the control runs with none)")
	}
	if err := o.cfg.validate(); err != nil {
		return o, err
	}
	for _, l := range []string{o.serverCPUs, o.loaderCPUs} {
		if l != "" {
			if _, err := host.CountCPUs(l); err != nil {
				return o, err
			}
		}
	}
	return o, nil
}

// repoRoot is the repository this command's bench module belongs to: the
// parent of the first directory upwards from the working directory that holds
// bench/go.mod or is the bench module.
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, "cmd", "demo")) && fileExists(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no repository with cmd/demo above %s: pass -demo", wd)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "blocked:", err)
		os.Exit(2)
	}
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "blocked:", err)
		os.Exit(1)
	}
}

// row is one measurement of the table.
type row struct {
	round   int
	demo    string
	blocked int
	res     result
}

func run(o options) error {
	tmp, err := os.MkdirTemp("", "blocked-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for i := range o.demos {
		d := &o.demos[i]
		if d.bin, err = demoBinary(d.Path, filepath.Join(tmp, d.Name)); err != nil {
			return fmt.Errorf("demo %s: %w", d.Name, err)
		}
	}
	if o.loaderCPUs != "" {
		pid := strconv.Itoa(os.Getpid())
		if out, err := exec.Command("taskset", "-a", "-c", "-p", o.loaderCPUs, pid).CombinedOutput(); err != nil {
			return fmt.Errorf("taskset -p %s: %v: %s", o.loaderCPUs, err, strings.TrimSpace(string(out)))
		}
		n, _ := host.CountCPUs(o.loaderCPUs)
		runtime.GOMAXPROCS(n)
	}
	settings := []int{o.cfg.Blocked}
	if o.control {
		settings = append(settings, 0)
	}
	fmt.Printf("# %s, GOMAXPROCS=%d server on CPUs %q, loader (GOMAXPROCS=%d) on %q; GET /bench over h2c, %d conns x %d streams, warm-up %v, window %v; blocked: %d GET /slow?ms=%d on %d h2c conns\n",
		time.Now().UTC().Format(time.RFC3339), o.serverProcs, o.serverCPUs, runtime.GOMAXPROCS(0), o.loaderCPUs,
		o.cfg.Conns, o.cfg.Streams, o.cfg.Warmup, o.cfg.Duration, o.cfg.Blocked, o.cfg.BlockFor.Milliseconds(), o.cfg.BlockedConns)
	var rows []row
	for r := 1; r <= o.rounds; r++ {
		for _, d := range o.demos {
			for _, b := range settings {
				cfg := o.cfg
				cfg.Blocked = b
				res, err := measureDemo(o, d, cfg, r, tmp)
				if err != nil {
					return fmt.Errorf("round %d, %s, %d blocked: %w", r, d.Name, b, err)
				}
				rows = append(rows, row{round: r, demo: d.Name, blocked: b, res: res})
				fmt.Println(formatLine(rows[len(rows)-1]))
			}
		}
	}
	fmt.Println()
	fmt.Print(formatTable(rows))
	if len(o.demos) > 1 {
		fmt.Println()
		fmt.Print(formatRatios(rows, o.demos[0].Name, o.quietShare))
	}
	if o.control {
		fmt.Println()
		fmt.Print(formatBlockedCost(rows, o.quietShare))
	}
	return nil
}

// demoBinary returns path if it is a file, else builds path/cmd/demo into out.
func demoBinary(path, out string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return filepath.Abs(path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/demo")
	cmd.Dir = path
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/demo in %s: %v\n%s", path, err, msg)
	}
	return out, nil
}

// measureDemo starts a fresh demo, waits until it answers, measures, and stops it.
func measureDemo(o options, d demoSpec, cfg config, round int, tmp string) (result, error) {
	addr, err := host.FreeAddr()
	if err != nil {
		return result{}, err
	}
	args := []string{"-addr", addr, "-loops", strconv.Itoa(o.serverProcs)}
	if o.profileDir != "" {
		args = append(args, "-cpuprofile", filepath.Join(o.profileDir, fmt.Sprintf("%s-%d-%d.pprof", d.Name, cfg.Blocked, round)))
	}
	argv := append([]string{d.bin}, args...)
	if o.serverCPUs != "" {
		argv = append([]string{"taskset", "-c", o.serverCPUs}, argv...)
	}
	logPath := filepath.Join(tmp, fmt.Sprintf("%s-%d-%d.log", d.Name, cfg.Blocked, round))
	logf, err := os.Create(logPath)
	if err != nil {
		return result{}, err
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(o.serverProcs))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer func() {
		// SIGTERM: the demo shuts down gracefully and writes its profile.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()
	if err := waitReady(addr, exited, 15*time.Second); err != nil {
		msg, _ := os.ReadFile(logPath)
		return result{}, fmt.Errorf("%v; its output:\n%s", err, msg)
	}
	cfg.PID = cmd.Process.Pid // taskset execs the demo: same process
	return measure(addr, cfg)
}

// waitReady polls GET /bench over h2c until it is answered 200, the process
// exits, or timeout passes.
func waitReady(addr string, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-exited:
			return errors.New("the demo exited before answering")
		default:
		}
		err := probe(addr)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer to GET /bench within %v: %v", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func probe(addr string) error {
	c, err := h2client.Dial(addr, h2client.Options{Timeout: time.Second})
	if err != nil {
		return err
	}
	defer c.Close()
	resp, err := c.Do(&h2client.Request{Method: "GET", Path: "/bench", Authority: addr})
	if err != nil {
		return err
	}
	if resp.Status != 200 {
		return fmt.Errorf("GET /bench: status %d", resp.Status)
	}
	return nil
}
