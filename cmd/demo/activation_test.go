//go:build linux

package main

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/celeris-dev/celeris/celeristest"
	"github.com/quic-go/quic-go/http3"
)

// freePort returns a port the system had free on 127.0.0.1 for network
// ("tcp" or "udp"), for systemd-socket-activate's -l.
func freePort(t *testing.T, network string) string {
	t.Helper()
	if network == "udp" {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer pc.Close()
		return pc.LocalAddr().String()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// activated is the demo started by systemd-socket-activate.
type activated struct {
	cmd       *exec.Cmd
	mu        sync.Mutex
	listening []string // the demo's "demo: listening" lines, of every process
	log       strings.Builder
	pids      []int
}

func (a *activated) lines() (int, string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.listening), a.log.String()
}

// activate runs systemd-socket-activate with sockArgs, starting the demo's
// main (TestDemoProcess) with demoArgs once a client comes.
func activate(t *testing.T, sockArgs []string, demoArgs string) *activated {
	t.Helper()
	bin, err := exec.LookPath("systemd-socket-activate")
	if err != nil {
		t.Skip("systemd-socket-activate not installed (apt-get install systemd)")
	}
	// mark is in the environment of the demo and of every process it starts
	// (an upgrade passes the environment on), so that the cleanup finds a new
	// process whose parent already exited.
	mark := fmt.Sprintf("CELERIS_TEST_MARK=%d-%d", os.Getpid(), time.Now().UnixNano())
	args := append(append([]string{}, sockArgs...), "-E", "CELERIS_DEMO_ARGS="+demoArgs, "-E", mark, os.Args[0], "-test.run=^TestDemoProcess$")
	a := &activated{cmd: exec.Command(bin, args...)}
	stderr, err := a.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a.pids = append(a.pids, a.cmd.Process.Pid) // it execs the demo in place
	go func() { _ = a.cmd.Wait() }()
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			line := sc.Text()
			a.mu.Lock()
			a.log.WriteString(line + "\n")
			if strings.Contains(line, "demo: listening") {
				a.listening = append(a.listening, line)
			}
			a.mu.Unlock()
			if strings.HasPrefix(line, "Listening on") {
				once.Do(func() { close(started) })
			}
		}
	}()
	t.Cleanup(func() {
		a.mu.Lock()
		pids := a.pids
		a.mu.Unlock()
		for _, pid := range append(pids, marked(mark)...) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if t.Failed() {
			_, log := a.lines()
			t.Logf("systemd-socket-activate and the demo:\n%s", log)
		}
	})
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("systemd-socket-activate did not listen")
	}
	return a
}

// marked returns the processes whose environment holds mark ("NAME=VALUE").
func marked(mark string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range strings.Split(string(b), "\x00") {
			if kv == mark {
				pids = append(pids, n)
				break
			}
		}
	}
	return pids
}

// childOf returns the process whose parent is pid (the demo that an upgrade
// started), 0 when there is none.
func childOf(pid int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if f := strings.Fields(s[i+1:]); len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(pid) {
			return n
		}
	}
	return 0
}

// TestDemoSocketActivation: the demo started by systemd-socket-activate -l
// (two TCP sockets: plaintext, then TLS) serves on the inherited sockets; on
// SIGHUP it starts itself again on them and the old process exits after its
// drain while a keep-alive client's requests all succeed. With --datagram it
// serves HTTP/3 on the inherited UDP socket (quic-go's client).
func TestDemoSocketActivation(t *testing.T) {
	plain, tlsAddr := freePort(t, "tcp"), freePort(t, "tcp")
	a := activate(t, []string{"-l", plain, "-l", tlsAddr}, "-addr 127.0.0.1:0")
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, ForceAttemptHTTP2: true,
	}}
	get := func(url string, proto int) error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != 200 || resp.ProtoMajor != proto {
			return &url2Error{url, resp.Status + " " + resp.Proto + " " + string(b)}
		}
		return nil
	}
	// The first connection makes systemd-socket-activate start the demo; it
	// waits in the backlog meanwhile.
	if err := get("http://"+plain+"/bench", 1); err != nil {
		t.Fatal(err)
	}
	if err := get("https://"+tlsAddr+"/json", 2); err != nil {
		t.Fatal(err)
	}
	if n, _ := a.lines(); n != 1 {
		t.Fatalf("%d demo processes said they listen, want 1", n)
	}

	// SIGHUP under load: no request fails.
	var ok, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, u := range []struct {
		url   string
		proto int
	}{{"http://" + plain + "/bench", 1}, {"https://" + tlsAddr + "/bench", 2}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := get(u.url, u.proto); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				} else {
					ok.Add(1)
				}
			}
		}()
	}
	old := a.cmd.Process.Pid
	time.Sleep(200 * time.Millisecond)
	if err := syscall.Kill(old, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for n, _ := a.lines(); n < 2; n, _ = a.lines() {
		if time.Now().After(deadline) {
			t.Fatal("no new demo process after SIGHUP")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c := childOf(old); c != 0 {
		a.mu.Lock()
		a.pids = append(a.pids, c)
		a.mu.Unlock()
	}
	for celeristest.Running(old) {
		if time.Now().After(deadline) {
			t.Fatal("the old demo process still runs")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("across the upgrade: %d requests answered, %d failed", ok.Load(), failed.Load())
	if failed.Load() != 0 {
		t.Fatalf("%d requests failed, first: %v", failed.Load(), firstErr.Load())
	}

	t.Run("h3", func(t *testing.T) {
		udp := freePort(t, "udp")
		activate(t, []string{"--datagram", "-l", udp}, "-addr 127.0.0.1:0 -tls-addr 127.0.0.1:0")
		tr := &http3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
		defer tr.Close()
		h3 := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		resp, err := h3.Get("https://" + udp + "/bench")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ProtoMajor != 3 || string(b) != "OK" {
			t.Fatalf("GET /bench over the inherited UDP socket: %d %s %q", resp.StatusCode, resp.Proto, b)
		}
	})
}

type url2Error struct{ url, what string }

func (e *url2Error) Error() string { return e.url + ": " + e.what }
