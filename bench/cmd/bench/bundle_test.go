package main

// TestBundle builds the static bundle (scripts/bundle.sh) into a temporary
// directory, unpacks its archive into another one outside the repository,
// and runs the suite, "bench scaling" and scripts/multicore.sh from there
// with a PATH that holds only the system tools they call (no go): the
// bundle must need neither the toolchain nor the source tree. It builds
// every binary with -trimpath, which shares no compiled package with a plain
// build: minutes on a cold build cache, so it runs only when asked,
// CELERIS_BENCH_BUNDLE=1 (.ci/run does).

import (
	"archive/tar"
	"compress/gzip"
	"debug/buildinfo"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/celeris-dev/celeris/bench/internal/report"
)

const bundleEnv = "CELERIS_BENCH_BUNDLE"

// bundleBinaries is what bundle.sh must ship.
var bundleBinaries = []string{"bench", "demo", "demo-opt", "peer", "floor", "grpcbench", "wsload", "pacedread"}

func TestBundle(t *testing.T) {
	if os.Getenv(bundleEnv) != "1" {
		t.Skipf("set %s=1 to build the static bundle and run the suite from it without go", bundleEnv)
	}
	if runtime.GOOS != "linux" {
		t.Skip("the bundle's servers and loader are measured on Linux")
	}
	script, err := filepath.Abs("../../scripts/bundle.sh")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	built := filepath.Join(tmp, "celeris-bench")
	cmd := exec.Command("bash", script, "-o", built)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+runtime.GOARCH)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bundle.sh: %v\n%s", err, out)
	}

	// Only what the archive holds, unpacked elsewhere.
	run := filepath.Join(tmp, "target")
	untar(t, built+".tar.gz", run)
	dir := filepath.Join(run, "celeris-bench")
	for _, name := range bundleBinaries {
		checkStatic(t, filepath.Join(dir, name))
	}
	if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
		t.Errorf("no README in the bundle: %v", err)
	}

	env := toolEnv(t, filepath.Join(tmp, "path"), "taskset", "true")
	out := filepath.Join(run, "out")
	c := exec.Command(filepath.Join(dir, "bench"), "-bin-dir", ".",
		"-frameworks", "celeris,nethttp", "-scenarios", "simple,json", "-protocols", "h1,h2c",
		"-mode", "fixed", "-duration", "500ms", "-warmup", "100ms", "-conns", "4", "-streams", "2",
		"-rounds", "1", "-progress", "off", "-out", out)
	c.Dir, c.Env = dir, env
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("bench from the bundle: %v\n%s", err, b)
	}
	rep := readReport(t, filepath.Join(out, "results.json"))
	if got := rep.Meta.Settings["servers"]; got != "prebuilt in ." {
		t.Errorf("servers setting %q, want prebuilt in .", got)
	}
	if len(rep.Results) != 8 {
		t.Errorf("%d results, want 2 frameworks x 2 scenarios x 2 protocols", len(rep.Results))
	}
	for _, res := range rep.Results {
		if res.Status != report.StatusOK || len(res.Runs) != 1 || res.Runs[0].Requests == 0 || res.Runs[0].Errors != 0 {
			t.Errorf("%s %s %s: status %s, notes %v, runs %+v", res.Framework, res.Scenario, res.Protocol, res.Status, res.Notes, res.Runs)
		}
	}

	sc := exec.Command(filepath.Join(dir, "bench"), "scaling", "-base", filepath.Join(out, "results.json"), "-multi", filepath.Join(out, "results.json"))
	sc.Env = env
	b, err := sc.CombinedOutput()
	if err != nil || strings.Count(string(b), "| 1.00x |") != 8 {
		t.Errorf("bench scaling of a run against itself: %v\n%s", err, b)
	}

	// multicore.sh end to end, reduced to one server CPU and one loader CPU.
	if runtime.NumCPU() < 2 {
		return
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Log("no taskset: multicore.sh (which refuses to run unpinned) not tried")
		return
	}
	menv := toolEnv(t, filepath.Join(tmp, "mpath"), "bash", "taskset", "true", "nproc", "grep", "sed",
		"seq", "date", "tee", "mkdir", "dirname", "tr", "sort", "tail", "cat")
	mout := filepath.Join(run, "multicore")
	m := exec.Command(filepath.Join(dir, "multicore.sh"))
	m.Dir = run
	m.Env = append(menv, "SERVER_CPUS=0", "BASE_CPUS=0", "LOADER_CPUS=1", "FRAMEWORKS=celeris,fasthttp",
		"SCENARIOS=simple", "PROTOCOLS=h1,h2c", "CONNS=4", "STREAMS=2", "DURATION=300ms", "WARMUP=100ms",
		"ROUNDS=1", "OUT="+mout)
	if b, err := m.CombinedOutput(); err != nil {
		t.Fatalf("multicore.sh: %v\n%s", err, b)
	}
	table, err := os.ReadFile(filepath.Join(mout, "scaling.md"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("multicore.sh's table (2-CPU rehearsal):\n%s", table)
	// celeris h1 and h2c measured on both sides; fasthttp h1 measured, h2c skipped.
	if n := strings.Count(string(table), "| 1+1 |"); n < 3 || !strings.Contains(string(table), "HTTP/1.1 only") {
		t.Errorf("scaling table (%d measured rows):\n%s", n, table)
	}
	// bench peers' table: celeris against fasthttp on h1, round by round.
	peers, err := os.ReadFile(filepath.Join(mout, "peers.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(peers), "| h1 | simple | celeris ÷ fasthttp |") {
		t.Errorf("peers.md has no celeris ÷ fasthttp row:\n%s", peers)
	}
}

// toolEnv makes dir hold links to the named tools only and returns an
// environment whose PATH is dir: a go command cannot be found.
func toolEnv(t *testing.T, dir string, tools ...string) []string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("%s not found", tool)
		}
		if err := os.Symlink(p, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	// No other directory: whatever the bundle would call and is not listed
	// here (go above all) is not found.
	env := []string{"PATH=" + dir, "HOME=" + filepath.Dir(dir), "TMPDIR=" + os.TempDir()}
	return env
}

// checkStatic fails unless path is an ELF executable without an interpreter
// (no dynamic loader) built with CGO_ENABLED=0 and -trimpath.
func checkStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter: dynamically linked", filepath.Base(path))
		}
	}
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	var cgo, trim string
	for _, s := range bi.Settings {
		switch s.Key {
		case "CGO_ENABLED":
			cgo = s.Value
		case "-trimpath":
			trim = s.Value
		}
	}
	if cgo != "0" || trim != "true" {
		t.Errorf("%s: CGO_ENABLED=%q -trimpath=%q, want 0 and true", filepath.Base(path), cgo, trim)
	}
}

// untar unpacks a .tar.gz into dir, refusing paths that leave it.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, h.Name)
		if !strings.HasPrefix(p, dir+string(filepath.Separator)) {
			t.Fatalf("archive path %q leaves the directory", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			names = append(names, filepath.Base(p))
			err = writeFile(p, tr, os.FileMode(h.Mode).Perm())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range append(slices.Clone(bundleBinaries), "multicore.sh", "README.md") {
		if !slices.Contains(names, want) {
			t.Errorf("the archive has no %s (it has %v)", want, names)
		}
	}
}

func writeFile(p string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readReport(t *testing.T, path string) *report.Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Report
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}
