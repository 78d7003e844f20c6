package celeristest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server processes, for tests of celeris.Server.Upgrade and socket
// activation: a test starts its own test binary as a server (a test function
// that serves when an environment variable says so), and that process starts
// the next one when it upgrades. Each says it serves with PrintReady; the test
// reads those lines with Processes.Next.
//
//	func TestServerProcess(t *testing.T) {
//		if os.Getenv("MY_SERVER") == "" {
//			t.Skip("the server process of TestUpgrade")
//		}
//		s := celeris.New(...)
//		go func() { <-s.Ready(); celeristest.PrintReady("addr", s.Addr().String()) }()
//		_ = s.StartGraceful(10 * time.Second) // upgrades on SIGHUP
//		os.Exit(0)
//	}

// PrintReady writes the line "READY pid=PID k=v..." on stdout, which
// Processes.Next reads; kv alternates names and values (without spaces).
func PrintReady(kv ...string) {
	var b strings.Builder
	fmt.Fprintf(&b, "READY pid=%d", os.Getpid())
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %s=%s", kv[i], kv[i+1])
	}
	fmt.Println(b.String())
}

// Ready is a process's READY line.
type Ready struct {
	Pid    int
	Values map[string]string // the names and values after pid
}

// Processes are the server processes of a test: the one it started and those
// started by upgrades, which share its stdout and stderr.
type Processes struct {
	t     testing.TB
	Cmd   *exec.Cmd
	ready chan Ready
	mu    sync.Mutex
	log   strings.Builder
	pids  []int
}

// StartProcesses starts cmd (the caller sets its arguments, environment and
// extra files) with its stdout read for READY lines and its stderr kept (and
// logged when the test fails). When the test ends, every process that said it
// serves is killed.
func StartProcesses(t testing.TB, cmd *exec.Cmd) *Processes {
	t.Helper()
	p := &Processes{t: t, Cmd: cmd, ready: make(chan Ready, 16)}
	// A pipe of its own, not StdoutPipe: Wait closes that once the first
	// process exits, and the processes it started write to the same pipe.
	out, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	cmd.Stderr = (*processLog)(p)
	err = cmd.Start()
	w.Close() // the processes hold it
	if err != nil {
		out.Close()
		t.Fatal(err)
	}
	go func() {
		defer out.Close()
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) < 2 || f[0] != "READY" || !strings.HasPrefix(f[1], "pid=") {
				continue
			}
			r := Ready{Values: map[string]string{}}
			r.Pid, _ = strconv.Atoi(f[1][len("pid="):])
			for _, kv := range f[2:] {
				k, v, _ := strings.Cut(kv, "=")
				r.Values[k] = v
			}
			p.mu.Lock()
			p.pids = append(p.pids, r.Pid)
			p.mu.Unlock()
			p.ready <- r
		}
	}()
	go func() { _ = cmd.Wait() }()
	t.Cleanup(func() {
		p.mu.Lock()
		pids := append([]int(nil), p.pids...)
		p.mu.Unlock()
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("server processes' stderr:\n%s", p.Stderr())
		}
	})
	return p
}

// StartTestProcess runs the test binary's test function name (which serves
// when one of env says so) as a server process, with env added to this
// process's environment: StartProcesses of that command.
func StartTestProcess(t testing.TB, name string, env ...string) *Processes {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$")
	cmd.Env = append(os.Environ(), env...)
	return StartProcesses(t, cmd)
}

type processLog Processes

func (l *processLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.log.Write(b)
}

// Stderr is what the processes wrote on stderr so far.
func (p *Processes) Stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// Next waits up to d for the next READY line; past d the test fails.
func (p *Processes) Next(d time.Duration) Ready {
	p.t.Helper()
	select {
	case r := <-p.ready:
		return r
	case <-time.After(d):
		p.t.Fatalf("no server process said it serves within %v", d)
		return Ready{}
	}
}

// Running reports whether process pid runs: not when it exited, nor when it
// is a zombie that nobody reaps (an upgraded process's parent is gone).
func Running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // pid (comm) STATE PPID ...
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// WaitGone waits up to d for process pid to stop running; past d the test
// fails.
func WaitGone(t testing.TB, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for Running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after %v", pid, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
