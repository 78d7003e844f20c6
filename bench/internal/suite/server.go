package suite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/catalog"
	"github.com/celeris-dev/celeris/bench/internal/h1client"
	"github.com/celeris-dev/celeris/bench/internal/h2client"
	"github.com/celeris-dev/celeris/bench/internal/h3client"
	"github.com/celeris-dev/celeris/bench/internal/wsclient"
)

// serverProc is one running peer server.
type serverProc struct {
	addr    string
	pid     int
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process has been reaped
	waitErr error         // valid after exited is closed
}

// startServer runs argv with extra environment, output to logPath. The
// process gets SIGKILL if this one dies first (Linux parent-death signal).
func startServer(argv, env []string, addr, logPath string) (*serverProc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	p := &serverProc{addr: addr, pid: cmd.Process.Pid, logPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	return p, nil
}

func (p *serverProc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop asks for a graceful stop (SIGTERM: Go peers then write their
// profiles), and kills the process if it is still there after grace.
func (p *serverProc) stop(grace time.Duration) error {
	if !p.alive() {
		return fmt.Errorf("server had already exited: %v", p.waitErr)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	}
	p.cmd.Process.Kill()
	<-p.exited
	return fmt.Errorf("server ignored SIGTERM for %v and was killed", grace)
}

// logTail returns the last lines the server printed.
func (p *serverProc) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil || len(strings.TrimSpace(string(b))) == 0 {
		return "(no output)"
	}
	return tail(string(b), 8)
}

// waitReady polls a TCP connect plus GET /bench (for ws: a one-byte
// WebSocket echo on /ws/echo) until the server answers, the process exits,
// or timeout passes.
func waitReady(ctx context.Context, p *serverProc, proto string, timeout time.Duration) error {
	probe := probeHTTP
	switch {
	case proto == catalog.WS:
		probe = probeWS
	case catalog.IsTLS(proto):
		probe = probeTLS
	case proto == catalog.H3:
		probe = probeH3
	}
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if !p.alive() {
			return fmt.Errorf("exited before answering (%v); its output:\n%s", p.waitErr, p.logTail())
		}
		if last = probe(p.addr); last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer to the readiness probe within %v (%v); its output:\n%s", timeout, last, p.logTail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func probeHTTP(addr string) error {
	simple, _ := catalog.LookupScenario("simple")
	return check(addr, simple, catalog.H1, time.Second)
}

func probeTLS(addr string) error {
	simple, _ := catalog.LookupScenario("simple")
	return check(addr, simple, catalog.H1TLS, time.Second)
}

func probeH3(addr string) error {
	simple, _ := catalog.LookupScenario("simple")
	return check(addr, simple, catalog.H3, time.Second)
}

func probeWS(addr string) error {
	return wsclient.Echo(addr, catalog.WSPath, []byte("r"), time.Second)
}

// check sends one request of the scenario and compares the answer with the
// one every peer must give, bounded by timeout.
func check(addr string, sc catalog.Scenario, proto string, timeout time.Duration) error {
	if proto == catalog.WS {
		if err := wsclient.Echo(addr, sc.Path, sc.Message(), timeout); err != nil {
			return fmt.Errorf("websocket echo: %w", err)
		}
		return nil
	}
	if proto == catalog.H3 {
		c := h3client.New(addr, timeout)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		resp, err := c.Do(ctx, sc.Method, sc.Path, sc.Body(), true)
		if err != nil {
			return fmt.Errorf("h3 request failed: %w", err)
		}
		return wrongAnswer(sc.Check(resp.Status, resp.Body))
	}
	if catalog.IsH2(proto) {
		c, err := h2client.Dial(addr, h2client.Options{Capture: true, Timeout: timeout, TLS: catalog.IsTLS(proto)})
		if err != nil {
			return fmt.Errorf("%s connection failed: %w", proto, err)
		}
		defer c.Close()
		timer := time.AfterFunc(timeout, func() { c.Close() })
		defer timer.Stop()
		resp, err := c.Do(&h2client.Request{Method: sc.Method, Path: sc.Path, Authority: addr, Body: sc.Body()})
		if err != nil {
			return fmt.Errorf("request failed: %w", err)
		}
		return wrongAnswer(sc.Check(resp.Status, resp.Body))
	}
	req := h1client.Request{Method: sc.Method, Path: sc.Path, Host: addr, Body: sc.Body()}
	dial := h1client.Dial
	if catalog.IsTLS(proto) {
		dial = h1client.DialTLS
	}
	c, err := dial(addr, req, 1, timeout, true)
	if err != nil {
		return fmt.Errorf("connection failed: %w", err)
	}
	defer c.Close()
	c.NetConn().SetDeadline(time.Now().Add(timeout))
	var got error = errors.New("request failed: no response")
	err = c.RoundTrip(func(resp *h1client.Response, _ time.Duration) {
		got = wrongAnswer(sc.Check(resp.Status, resp.Body))
	})
	if err != nil && err != h1client.ErrCloseAfterResponse {
		return fmt.Errorf("request failed: %w", err)
	}
	return got
}

func wrongAnswer(err error) error {
	if err != nil {
		return fmt.Errorf("wrong answer: %w", err)
	}
	return nil
}
