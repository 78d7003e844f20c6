package enginetest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/internal/testkit"
)

// dialerEnv names the variable that makes a test binary the client side of
// RunManyIdle: "ADDR N" (checked before any test runs, in init).
const dialerEnv = "CELERIS_ENGINETEST_DIALER"

func init() {
	if v := os.Getenv(dialerEnv); v != "" {
		os.Exit(dialer(v, os.Stdin, os.Stdout))
	}
}

// RunManyIdle holds n idle connections to one engine at once, each still
// served: the client side runs in a child process (the test binary again), so
// that each process needs n descriptors and not 2n, and the case runs with
// 10,000 under a limit of 20,000. It skips under -short (TestConformance
// holds 1,000 there), when the limit is below n + 512, or under the race
// detector (whose goroutine limit a connection per goroutine passes).
func RunManyIdle(t *testing.T, newEngine Factory, n int) {
	if testing.Short() {
		t.Skipf("%d connections: not under -short", n)
	}
	if lim, ok := fdLimit(); !ok || lim < uint64(n+512) {
		t.Skipf("the descriptor limit (%d) is below %d", lim, n+512)
	}
	if raceEnabled {
		t.Skip("the race detector's goroutine limit is below the connections' goroutines")
	}
	s := start(t, newEngine, Options{})
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), dialerEnv+"="+s.addr+" "+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		_ = cmd.Wait()
	}()
	lines := bufio.NewReader(out)
	expectLine(t, lines, "open")
	testkit.Wait(t, fmt.Sprintf("%d connections open", n), func() bool { return s.eng.OpenConnections() == n })
	if _, err := io.WriteString(in, "serve\n"); err != nil {
		t.Fatal(err)
	}
	expectLine(t, lines, "served")
	in.Close() // the child closes its connections and exits
	if err := cmd.Wait(); err != nil {
		t.Fatalf("dialer: %v", err)
	}
	testkit.Wait(t, "every connection closed", func() bool { return s.eng.OpenConnections() == 0 })
}

// expectLine reads the child's next line and fails unless it is want.
func expectLine(t *testing.T, r *bufio.Reader, want string) {
	t.Helper()
	line, err := r.ReadString('\n')
	if got := strings.TrimSpace(line); got != want {
		t.Fatalf("dialer said %q (%v), want %q", got, err, want)
	}
}

// dialer is the child: it opens N connections to ADDR, says "open", and on
// "serve" sends a request on every 97th and checks its answer, then says
// "served" and holds the connections until its input ends. It returns the
// exit status.
func dialer(v string, in io.Reader, out io.Writer) int {
	addr, ns, _ := strings.Cut(v, " ")
	n, err := strconv.Atoi(ns)
	if err != nil {
		fmt.Fprintln(out, "error: bad", dialerEnv, v)
		return 2
	}
	conns := make([]net.Conn, 0, n)
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			fmt.Fprintf(out, "error: dial %d: %v\n", i, err)
			return 1
		}
		conns = append(conns, c)
	}
	fmt.Fprintln(out, "open")
	cmds := bufio.NewReader(in)
	if line, _ := cmds.ReadString('\n'); strings.TrimSpace(line) != "serve" {
		return 1
	}
	for i := 0; i < n; i += 97 {
		c := conns[i]
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		path := "/inline/" + strconv.Itoa(i)
		if _, err := c.Write([]byte(get(path))); err != nil {
			fmt.Fprintf(out, "error: connection %d: %v\n", i, err)
			return 1
		}
		if status, body, err := readAnswer(bufio.NewReader(c)); err != nil || status != 200 || body != path {
			fmt.Fprintf(out, "error: connection %d: %d %q %v\n", i, status, body, err)
			return 1
		}
	}
	fmt.Fprintln(out, "served")
	_, _ = io.Copy(io.Discard, cmds)
	for _, c := range conns {
		c.Close()
	}
	return 0
}
