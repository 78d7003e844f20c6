package suite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/host"
)

// benchModule is the bench module's path, as its go.mod declares it.
const benchModule = "github.com/celeris-dev/celeris/bench"

// findBenchDir returns the bench module directory: dir if given, else the
// first directory from the working directory upwards (or its bench/
// child) whose go.mod declares benchModule.
func findBenchDir(dir string) (string, error) {
	if dir != "" {
		if !isBenchModule(dir) {
			return "", fmt.Errorf("%s has no go.mod for %s", dir, benchModule)
		}
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isBenchModule(d) {
			return d, nil
		}
		if sub := filepath.Join(d, "bench"); isBenchModule(sub) {
			return sub, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no %s module above %s: run from bench/, pass -bench-dir, or -bin-dir DIR with prebuilt servers (bench/scripts/bundle.sh)", benchModule, wd)
		}
	}
}

func isBenchModule(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimSpace(string(first)) == "module "+benchModule
}

// goBuild runs "go build -o out pkg" in dir, bounded in time; the error
// carries the compiler's last lines.
func goBuild(ctx context.Context, dir, out, pkg string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = dir
	msg, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s (in %s): %v\n%s", pkg, dir, err, tail(string(msg), 15))
	}
	return nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// pinning says whether and how processes are pinned with taskset.
type pinning struct {
	server string // taskset list for servers, "" when not pinned
	loader string // this process's list, "" when not pinned
	cores  int    // cores the loader may use
	notes  []string
}

// setupPinning checks taskset, pins this process (every thread, so threads
// started later inherit it) to loaderCPUs and sizes GOMAXPROCS to match.
// Anything missing or refused becomes a note, and the run goes on unpinned.
func setupPinning(serverCPUs, loaderCPUs string) pinning {
	p := pinning{cores: runtime.GOMAXPROCS(0)}
	if serverCPUs == "" && loaderCPUs == "" {
		p.notes = append(p.notes, "pinning disabled (-server-cpus and -loader-cpus empty)")
		return p
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		p.notes = append(p.notes, "taskset not found: servers and loader are not pinned (install util-linux)")
		return p
	}
	if serverCPUs != "" {
		if out, err := exec.Command("taskset", "-c", serverCPUs, "true").CombinedOutput(); err != nil {
			p.notes = append(p.notes, fmt.Sprintf("taskset -c %s refused (%s): servers not pinned", serverCPUs, strings.TrimSpace(string(out))))
		} else {
			p.server = serverCPUs
		}
	}
	if loaderCPUs != "" {
		pid := strconv.Itoa(os.Getpid())
		if out, err := exec.Command("taskset", "-a", "-c", "-p", loaderCPUs, pid).CombinedOutput(); err != nil {
			p.notes = append(p.notes, fmt.Sprintf("taskset -p %s refused (%s): loader not pinned", loaderCPUs, strings.TrimSpace(string(out))))
		} else {
			p.loader = loaderCPUs
			if n, err := host.CountCPUs(loaderCPUs); err == nil {
				p.cores = n
				runtime.GOMAXPROCS(n)
			}
		}
	}
	if p.server != "" && p.loader != "" && host.Overlap(p.server, p.loader) {
		p.notes = append(p.notes, "server and loader CPU lists overlap: they compete for the same cores")
	}
	return p
}

// command returns the argv that runs bin pinned to the server CPUs.
func (p pinning) command(bin string, args ...string) []string {
	if p.server == "" {
		return append([]string{bin}, args...)
	}
	return append([]string{"taskset", "-c", p.server, bin}, args...)
}

// execOutput runs bin and returns its combined output.
func execOutput(ctx context.Context, bin string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
	return string(out), err
}
