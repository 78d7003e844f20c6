package main

// The smoke test runs the driver in this test binary, unpinned, for one short
// round: each server in a child process (this binary again, in server mode),
// both scenarios, a few hundred RPCs each. Opt-in like bench/smoke_test.go:
// CELERIS_BENCH_SMOKE=1 go test ./... (from bench/).

import (
	"os"
	"strings"
	"testing"
	"time"
)

const (
	smokeEnv = "CELERIS_BENCH_SMOKE"
	childEnv = "GRPCBENCH_CHILD" // set: this test binary runs main, as a server child
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestSmoke(t *testing.T) {
	if os.Getenv(smokeEnv) != "1" {
		t.Skipf("set %s=1 to run each gRPC server for a few hundred RPCs", smokeEnv)
	}
	t.Setenv(childEnv, "1") // inherited by the server children
	cfg := driveConfig{
		Servers:     serverNames,
		Scenarios:   []string{"unary", "stream"},
		Rounds:      1,
		Warmup:      100 * time.Millisecond,
		Duration:    300 * time.Millisecond,
		Load:        loadConfig{Conns: 2, Streams: 8, Size: 16, StreamMsgs: 16},
		ServerProcs: 1,
		ProfileDir:  t.TempDir(),
	}
	var log strings.Builder
	start := time.Now()
	res, err := drive(cfg, &log)
	t.Logf("driver log (%v):\n%s", time.Since(start).Round(time.Millisecond), log.String())
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	printTable(&table, cfg, res)
	t.Logf("table:\n%s", table.String())
	if len(res) != len(cfg.Servers)*len(cfg.Scenarios) {
		t.Fatalf("%d results, want %d", len(res), len(cfg.Servers)*len(cfg.Scenarios))
	}
	for _, r := range res {
		if r.Units == 0 || r.Errors != 0 || r.Err != nil {
			t.Errorf("%s %s: %d %s, %d errors (%v)", r.Server, r.Scenario, r.Units, unit(r.Scenario), r.Errors, r.Err)
		}
		if r.ServerCPU <= 0 {
			t.Logf("%s %s: no server CPU time seen in %v", r.Server, r.Scenario, r.Wall)
		}
	}
	for _, s := range cfg.Servers {
		if fi, err := os.Stat(cfg.ProfileDir + "/" + s + "-r1.prof"); err != nil || fi.Size() == 0 {
			t.Errorf("%s: no CPU profile (%v)", s, err)
		}
	}
}

// TestLoadMode runs the loader's own mode against an in-process grpc-go server.
func TestLoadMode(t *testing.T) {
	if os.Getenv(smokeEnv) != "1" {
		t.Skipf("set %s=1", smokeEnv)
	}
	addr, stop, err := startServer("celeris", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, sc := range []string{"unary", "stream"} {
		if err := run([]string{"-load", addr, "-scenario", sc, "-duration", "200ms", "-conns", "1", "-streams", "4"}); err != nil {
			t.Errorf("%s: %v", sc, err)
		}
	}
}
