package suite

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/bench/internal/host"
	"github.com/celeris-dev/celeris/bench/internal/load"
	"github.com/celeris-dev/celeris/bench/internal/procstat"
	"github.com/celeris-dev/celeris/bench/internal/report"
)

// checkTimeout bounds the one-request answer check before measuring.
const checkTimeout = 5 * time.Second

// measure runs one (round, framework, scenario, protocol, connection count)
// with a fresh server process and records the outcome.
func (s *Suite) measure(ctx context.Context, round int, fw catalog.Framework, sc catalog.Scenario, proto string, conns int) {
	name := label(sc, conns)
	res := s.rep.Get(fw.Name, name, proto)
	label := fmt.Sprintf("[r%d/%d] %-8s %-5s %-14s", round, s.cfg.Rounds, name, proto, fw.Name)
	if !fw.Supports(proto) {
		res.Status = report.StatusSkipped
		res.AddNote(fw.Name + " speaks HTTP/1.1 only")
		if key := fw.Name + "/" + proto; !s.said[key] {
			s.said[key] = true
			s.con.printf("%s skipped: %s speaks HTTP/1.1 only (not an error)", label, fw.Name)
		}
		return
	}
	fail := func(what string, err error) {
		first, _, _ := strings.Cut(err.Error(), "\n")
		res.AddNote(what + ": " + first)
		s.con.printf("%s FAILED: %s: %v", label, what, err)
	}

	tag := fmt.Sprintf("%s-%s-%s-r%d", fw.Name, name, proto, round)
	addr, err := host.FreeAddr()
	if err != nil {
		fail("server failed to start", err)
		return
	}
	argv, err := s.serverCommand(fw, proto, addr, tag)
	if err != nil {
		fail("server failed to start", err)
		return
	}
	logPath := filepath.Join(s.logDir, tag+".log")
	proc, err := startServer(argv, []string{"GOMAXPROCS=" + strconv.Itoa(s.cfg.ServerProcs)}, addr, logPath)
	if err != nil {
		fail("server failed to start", err)
		return
	}
	keepLog := true // the log of a failed server stays in <out>/logs
	defer func() {
		if proc.alive() {
			if err := proc.stop(stopGrace); err != nil {
				s.con.printf("%s note: %v", label, err)
				keepLog = true
			}
		}
		if !keepLog {
			os.Remove(logPath)
		}
	}()
	if err := waitReady(ctx, proc, proto, s.cfg.ReadyTimeout); err != nil {
		if ctx.Err() == nil {
			fail("server failed to start", fmt.Errorf("%w (log: %s)", err, logPath))
		}
		return
	}
	if err := check(addr, sc, proto, checkTimeout); err != nil {
		fail("answer check", err)
		return
	}

	target := load.Target{
		Proto: proto, Addr: addr, Method: sc.Method, Path: sc.Path, Body: sc.Body(),
		Pipeline: s.cfg.Pipeline, Streams: s.cfg.Streams,
	}
	mode, nconns := s.cfg.Mode, s.cfg.Conns
	if proto == catalog.WS {
		target.Message = sc.Message()
		mode, nconns = load.ModeFixed, conns
	}
	if sc.Idle {
		run, err := s.idle(ctx, proc, target, conns)
		if err != nil {
			s.con.printf("%s interrupted", label)
			return
		}
		if !proc.alive() {
			fail("server died during the run", fmt.Errorf("%v; its output:\n%s", proc.waitErr, proc.logTail()))
			return
		}
		run.Round = round
		res.AddRun(run)
		keepLog = false
		s.con.printf("%s idle %d conns: RSS %s -> %s, server CPU %.2f s, %d failed", label, conns,
			report.MB(run.RSSBaseBytes), report.MB(run.RSSBytes), run.ServerCPUS, run.Errors)
		for _, w := range run.Warnings {
			s.con.printf("%s warning: %s", label, w)
		}
		return
	}

	var cpu0, cpu1, sys0, sys1 time.Duration
	var rss int64
	opts := load.Options{
		Target:      target,
		Mode:        mode,
		Rampup:      s.cfg.Rampup,
		Conns:       nconns,
		Duration:    s.cfg.Duration,
		Warmup:      s.cfg.Warmup,
		LoaderCores: s.pin.cores,
		OnWindow: func(start bool) {
			d, _ := procstat.ProcessCPU(proc.pid)
			sys, _ := procstat.SystemBusy()
			if start {
				cpu0, sys0 = d, sys
			} else {
				cpu1, sys1 = d, sys
				if proto == catalog.WS {
					rss, _ = procstat.RSS(proc.pid)
				}
			}
		},
		Progress: func(clients int, rps float64, p95 time.Duration) {
			s.con.progress(fw.Name, name, proto, clients, rps, p95)
		},
	}
	r, err := load.Run(ctx, opts)
	if err != nil {
		s.con.printf("%s interrupted", label)
		return
	}
	if !proc.alive() {
		fail("server died during the run", fmt.Errorf("%v; its output:\n%s", proc.waitErr, proc.logTail()))
		return
	}
	run := toRun(round, r, cpu1-cpu0, sys1-sys0)
	run.RSSBytes = rss
	res.AddRun(run)
	keepLog = false
	s.con.printf("%s %s", label, summary(run))
	for _, w := range run.Warnings {
		s.con.printf("%s warning: %s", label, w)
	}
}

// noiseThreshold is the share of a core other processes may use during a
// window before the run is flagged as noisy.
const noiseThreshold = 0.10

func toRun(round int, r load.Result, serverCPU, systemCPU time.Duration) report.Run {
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	run := report.Run{
		Round:      round,
		Clients:    r.Clients,
		RPS:        r.RPS,
		P50Ms:      ms(r.P50),
		P95Ms:      ms(r.P95),
		P99Ms:      ms(r.P99),
		MaxMs:      ms(r.Max),
		Requests:   r.Total.OK,
		Non2xx:     r.Total.Non2xx,
		Errors:     r.Total.Errors,
		ElapsedS:   r.Elapsed.Seconds(),
		ServerCPUS: serverCPU.Seconds(),
		LoaderCPU:  r.LoaderCPU,
		StopReason: r.StopReason,
		Warnings:   r.Warnings,
	}
	if serverCPU > 0 {
		run.ReqPerServerCPUS = float64(r.Total.OK) / serverCPU.Seconds()
	}
	if r.Elapsed > 0 && systemCPU > 0 {
		other := (systemCPU - serverCPU - r.LoaderCPUTime).Seconds() / r.Elapsed.Seconds()
		run.OtherCPU = max(other, 0)
		if other > noiseThreshold {
			run.Warnings = append(run.Warnings, fmt.Sprintf(
				"other processes kept %.0f%% of a core busy during the window: the machine was not quiet", other*100))
		}
	}
	for _, p := range r.Series {
		run.Series = append(run.Series, report.Point{Clients: p.Clients, RPS: p.RPS, P95Ms: ms(p.P95)})
	}
	return run
}

// summary is the one line printed per measurement.
func summary(r report.Run) string {
	eff := "—"
	if r.ReqPerServerCPUS > 0 {
		eff = report.Thousands(r.ReqPerServerCPUS)
	}
	s := fmt.Sprintf("%10s rps  clients %4d  p95 %-9s  req/server-CPU-s %9s  loader CPU %3.0f%%",
		report.Thousands(r.RPS), r.Clients, report.FormatMs(r.P95Ms), eff, r.LoaderCPU*100)
	if r.RSSBytes > 0 {
		s += "  RSS " + report.MB(r.RSSBytes)
	}
	if r.StopReason != "" {
		s += "  (" + r.StopReason + ")"
	}
	return s
}

// idleSettle bounds how long the idle connections may take to make their
// one round trip each.
const idleSettle = 30 * time.Second

// idle opens n WebSocket connections, lets each make one round trip, then
// leaves them quiet for -duration and reads the server's RSS (before the
// connections and at the end) and its CPU time over the quiet window.
func (s *Suite) idle(ctx context.Context, proc *serverProc, t load.Target, n int) (report.Run, error) {
	var run report.Run
	base, _ := procstat.RSS(proc.pid)
	rec := load.NewRecorder(1)
	pool := load.NewWSPool(t, rec, 1, true)
	defer pool.Stop()
	pool.Grow(n)
	if !pool.WaitAnswered(idleSettle) {
		run.Warnings = append(run.Warnings, fmt.Sprintf("only %d of %d connections answered within %v",
			pool.Answered(), n, idleSettle))
	}
	cpu0, _ := procstat.ProcessCPU(proc.pid)
	start := time.Now()
	if err := sleepCtx(ctx, s.cfg.Duration); err != nil {
		return run, err
	}
	cpu1, _ := procstat.ProcessCPU(proc.pid)
	rss, _ := procstat.RSS(proc.pid)
	counts := rec.Drain(load.NewHistogram())
	run.Clients = n
	run.Requests = counts.OK
	run.Errors = pool.Failed()
	run.ElapsedS = time.Since(start).Seconds()
	run.ServerCPUS = (cpu1 - cpu0).Seconds()
	run.RSSBytes, run.RSSBaseBytes = rss, base
	if f := pool.Failed(); f > 0 {
		run.Warnings = append(run.Warnings, fmt.Sprintf("%d of %d connections failed, the first: %v", f, n, pool.FirstError()))
	}
	return run, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
