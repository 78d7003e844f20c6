package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/procstat"
)

// driveConfig is the driver's run.
type driveConfig struct {
	Servers, Scenarios []string
	Rounds             int
	Warmup, Duration   time.Duration
	Load               loadConfig // Addr and Scenario are set per run
	Pin                bool
	ServerCPU, LoadCPU string
	ServerProcs        int
	ProfileDir         string
	// Exe is the binary started in server mode [os.Executable()].
	Exe string
}

// result is one measured window.
type result struct {
	Round            int
	Server, Scenario string
	Units            int64         // RPCs or messages completed in the window
	Wall             time.Duration // the window
	ServerCPU        time.Duration // the server's user+system time in the window
	LoaderCPU        time.Duration // this process's
	OtherCPU         time.Duration // the rest of the machine (busy - server - loader), floored at 0
	Errors           int64
	Err              error
	// Reads and Writes are the server's read and write system calls in the
	// window (syscr, syscw of /proc/PID/io; -1 when unreadable).
	Reads, Writes int64
}

// PerCPUSecond is units per server CPU-second (0 when no CPU time was seen).
func (r result) PerCPUSecond() float64 {
	if r.ServerCPU <= 0 {
		return 0
	}
	return float64(r.Units) / r.ServerCPU.Seconds()
}

func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// drive runs every round, logging each window to log, and returns the results.
func drive(cfg driveConfig, log io.Writer) ([]result, error) {
	for _, s := range cfg.Servers {
		if !slices.Contains(serverNames, s) && !slices.Contains(extraServers, s) {
			return nil, fmt.Errorf("unknown server %q (want %s)", s, strings.Join(append(serverNames, extraServers...), ","))
		}
	}
	for _, s := range cfg.Scenarios {
		if s != "unary" && s != "stream" {
			return nil, fmt.Errorf("unknown scenario %q (want unary,stream)", s)
		}
	}
	if len(cfg.Servers) == 0 || len(cfg.Scenarios) == 0 || cfg.Rounds < 1 || cfg.Duration <= 0 {
		return nil, errors.New("need servers, scenarios, rounds >= 1 and a duration")
	}
	if cfg.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		cfg.Exe = exe
	}
	var taskset []string
	if cfg.Pin {
		if err := pinSelf(cfg.LoadCPU); err != nil {
			return nil, err
		}
		taskset = []string{"taskset", "-c", cfg.ServerCPU}
	}
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(log, "# servers pinned: %v (server CPUs %q, GOMAXPROCS=%d; loader CPUs %q, GOMAXPROCS=%d)\n",
		cfg.Pin, cfg.ServerCPU, cfg.ServerProcs, cfg.LoadCPU, runtime.GOMAXPROCS(0))
	fmt.Fprintf(log, "# load: %d conns x %d concurrent RPCs, %d-byte payloads, %d msgs per stream; warmup %v, window %v, %d rounds\n",
		cfg.Load.Conns, cfg.Load.Streams, cfg.Load.Size, cfg.Load.StreamMsgs, cfg.Warmup, cfg.Duration, cfg.Rounds)
	var results []result
	for round := 1; round <= cfg.Rounds; round++ {
		n := len(cfg.Servers)
		for i := range n {
			// The order rotates per round so no server always follows the same one.
			name := cfg.Servers[(i+round-1)%n]
			rs, err := measureServer(cfg, taskset, round, name)
			if err != nil {
				return results, fmt.Errorf("round %d, %s: %w", round, name, err)
			}
			for _, r := range rs {
				fmt.Fprintf(log, "round %d %-8s %-6s %9d %s in %5.2fs  server CPU %5.2fs (%3.0f%%)  %9.0f %s/server-CPU-s  loader %3.0f%%  other %3.0f%%  errors %d  reads/writes per 1k %s: %s\n",
					r.Round, r.Server, r.Scenario, r.Units, unit(r.Scenario), r.Wall.Seconds(),
					r.ServerCPU.Seconds(), 100*r.ServerCPU.Seconds()/r.Wall.Seconds(),
					r.PerCPUSecond(), unit(r.Scenario),
					100*r.LoaderCPU.Seconds()/r.Wall.Seconds(), 100*r.OtherCPU.Seconds()/r.Wall.Seconds(), r.Errors,
					unit(r.Scenario), perThousand(r))
				if r.Err != nil {
					fmt.Fprintf(log, "    first error: %v\n", r.Err)
				}
			}
			results = append(results, rs...)
		}
	}
	return results, nil
}

// pinSelf pins every thread of this process to cpus (threads started later
// inherit it) and sizes GOMAXPROCS to match.
func pinSelf(cpus string) error {
	pid := strconv.Itoa(os.Getpid())
	if out, err := exec.Command("taskset", "-a", "-c", "-p", cpus, pid).CombinedOutput(); err != nil {
		return fmt.Errorf("taskset -a -c -p %s %s: %v: %s (use -pin=false)", cpus, pid, err, strings.TrimSpace(string(out)))
	}
	n := 0
	for part := range strings.SplitSeq(cpus, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || b < a {
			return fmt.Errorf("bad CPU list %q", cpus)
		}
		n += b - a + 1
	}
	runtime.GOMAXPROCS(n)
	return nil
}

// measureServer starts server name as a child, measures every scenario
// against it, and stops it.
func measureServer(cfg driveConfig, taskset []string, round int, name string) ([]result, error) {
	args := []string{"-server", name, "-addr", "127.0.0.1:0"}
	if cfg.ProfileDir != "" {
		args = append(args, "-cpuprofile", filepath.Join(cfg.ProfileDir, fmt.Sprintf("%s-r%d.prof", name, round)))
	}
	argv := append(append(slices.Clone(taskset), cfg.Exe), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS="+strconv.Itoa(cfg.ServerProcs))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// taskset execs the server: the child's PID is the server's.
	pid := cmd.Process.Pid
	defer stopChild(cmd)
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				addrc <- a
				break
			}
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(10 * time.Second):
		return nil, errors.New("server did not print its address in 10s")
	}
	var rs []result
	for _, sc := range cfg.Scenarios {
		lc := cfg.Load
		lc.Addr, lc.Scenario = addr, sc
		r, err := window(lc, pid, cfg.Warmup, cfg.Duration)
		if err != nil {
			return rs, err
		}
		r.Round, r.Server = round, name
		rs = append(rs, r)
	}
	return rs, nil
}

// stopChild ends a server child with SIGTERM (so it writes its profile), or
// SIGKILL after 5 s.
func stopChild(cmd *exec.Cmd) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// window loads addr for warmup, then measures units and CPU times over d.
func window(lc loadConfig, pid int, warmup, d time.Duration) (result, error) {
	r := result{Scenario: lc.Scenario}
	l, err := startLoad(lc)
	if err != nil {
		return r, err
	}
	defer l.stop()
	time.Sleep(warmup)
	cpu0, err := procstat.ProcessCPU(pid)
	if err != nil {
		return r, err
	}
	self0 := procstat.SelfCPU()
	busy0, _ := procstat.SystemBusy()
	r0, w0 := syscalls(pid)
	n0 := l.units.Load()
	t0 := time.Now()
	time.Sleep(d)
	n1 := l.units.Load()
	r.Wall = time.Since(t0)
	cpu1, err := procstat.ProcessCPU(pid)
	if err != nil {
		return r, err
	}
	self1 := procstat.SelfCPU()
	busy1, _ := procstat.SystemBusy()
	r1, w1 := syscalls(pid)
	r.Reads, r.Writes = -1, -1
	if r0 >= 0 && r1 >= 0 {
		r.Reads, r.Writes = r1-r0, w1-w0
	}
	r.Units = n1 - n0
	r.ServerCPU = cpu1 - cpu0
	r.LoaderCPU = self1 - self0
	r.OtherCPU = max(0, busy1-busy0-r.ServerCPU-r.LoaderCPU)
	r.Errors, r.Err = l.err()
	return r, nil
}

// syscalls returns the read and write system calls process pid made so far
// (syscr and syscw of /proc/PID/io), or -1, -1.
func syscalls(pid int) (reads, writes int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return -1, -1
	}
	reads, writes = -1, -1
	for line := range strings.SplitSeq(string(b), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "syscr":
			reads = n
		case "syscw":
			writes = n
		}
	}
	if reads < 0 || writes < 0 {
		return -1, -1
	}
	return reads, writes
}

// printTable prints, per scenario, the median of every server's rounds, and
// its ratio to grpc-go's own server and to the net/http mount: the ratio of the
// medians, and the median (min-max) of the ratios within each round, which a
// noisy machine disturbs less (a round's servers run seconds apart).
func printTable(w io.Writer, cfg driveConfig, res []result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w)
	for _, sc := range cfg.Scenarios {
		u := unit(sc)
		fmt.Fprintf(tw, "%s\tserver\t%s/server-CPU-s\tvs grpc\tper round\tvs nethttp\tper round\t%s/s\tserver CPU\treads/writes per 1k\terrors\t\n", sc, u, u)
		for _, name := range cfg.Servers {
			per := median(res, name, sc, result.PerCPUSecond)
			rate := median(res, name, sc, func(r result) float64 { return float64(r.Units) / r.Wall.Seconds() })
			util := median(res, name, sc, func(r result) float64 { return 100 * r.ServerCPU.Seconds() / r.Wall.Seconds() })
			var errs int64
			var io []result
			for _, r := range res {
				if r.Server == name && r.Scenario == sc {
					errs += r.Errors
					if r.Reads >= 0 && r.Units > 0 {
						io = append(io, r)
					}
				}
			}
			sys := "-"
			if len(io) > 0 {
				sys = fmt.Sprintf("%.0f/%.0f",
					median(io, name, sc, func(r result) float64 { return 1000 * float64(r.Reads) / float64(r.Units) }),
					median(io, name, sc, func(r result) float64 { return 1000 * float64(r.Writes) / float64(r.Units) }))
			}
			fmt.Fprintf(tw, "\t%s\t%.0f\t%s\t%s\t%s\t%s\t%.0f\t%.0f%%\t%s\t%d\t\n", name, per,
				ratioOfMedians(res, name, "grpc", sc), roundRatios(res, name, "grpc", sc),
				ratioOfMedians(res, name, "nethttp", sc), roundRatios(res, name, "nethttp", sc),
				rate, util, sys, errs)
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "(medians of %d rounds; \"vs\": ratio of the medians; \"per round\": median (min-max) of the ratios within each round)\n", cfg.Rounds)
}

// perThousand formats the server's read and write system calls per 1,000 units.
func perThousand(r result) string {
	if r.Reads < 0 || r.Units == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f/%.0f", 1000*float64(r.Reads)/float64(r.Units), 1000*float64(r.Writes)/float64(r.Units))
}

// ratioOfMedians formats the ratio of server's median to base's ("-" when
// either is missing).
func ratioOfMedians(res []result, server, base, scenario string) string {
	a, b := median(res, server, scenario, result.PerCPUSecond), median(res, base, scenario, result.PerCPUSecond)
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// roundRatios formats the median, min and max of server's rate over base's in
// the same round.
func roundRatios(res []result, server, base, scenario string) string {
	at := map[int]float64{}
	for _, r := range res {
		if r.Server == base && r.Scenario == scenario && r.PerCPUSecond() > 0 {
			at[r.Round] = r.PerCPUSecond()
		}
	}
	var v []float64
	for _, r := range res {
		if r.Server == server && r.Scenario == scenario && at[r.Round] > 0 {
			v = append(v, r.PerCPUSecond()/at[r.Round])
		}
	}
	if len(v) == 0 {
		return "-"
	}
	slices.Sort(v)
	return fmt.Sprintf("%.2f (%.2f-%.2f)", medianOf(v), v[0], v[len(v)-1])
}

// median is the median of f over the results of server and scenario (0 if none).
func median(res []result, server, scenario string, f func(result) float64) float64 {
	var v []float64
	for _, r := range res {
		if r.Server == server && r.Scenario == scenario {
			v = append(v, f(r))
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return medianOf(v)
}

// medianOf is the median of sorted v (not empty).
func medianOf(v []float64) float64 {
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
