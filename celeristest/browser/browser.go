// Package browser drives headless Chromium from Go tests, over the DevTools
// protocol on --remote-debugging-pipe: to test what only a browser does with a
// server's answers (cookies and SameSite, CSRF checks on Fetch Metadata, a CSP,
// HTTP/2 and HTTP/3 negotiation, WebSocket). It is a test helper, not a general
// DevTools client: it sends commands, reads their replies, and polls a page
// with JavaScript until a condition holds. Celeris tests itself with it.
//
// A test opens a page and asks it for its state until the state settles:
//
//	b := browser.Start(t, browser.Chromium(t), "--ignore-certificate-errors")
//	deadline := time.Now().Add(60 * time.Second)
//	p, err := b.Open(deadline, url)
//	...
//	text, err := p.Poll(deadline, `document.title`, func(v string) (bool, error) { return v != "", nil })
//
// Waiting on a condition makes a loaded machine slower, never wrong. The
// alternative, --virtual-time-budget with --dump-dom, ends after a fixed amount
// of page work whether the page has finished or not: on a busy machine the
// page's network round trips outlast the budget and the dump shows a page still
// waiting.
//
// The protocol: Chromium reads NUL-terminated JSON commands on its fd 3 and
// writes NUL-terminated JSON replies and events on its fd 4. Page commands go
// to the session of a tab attached with flatten: true, so one pipe carries
// the browser's and every tab's messages. Events are skipped (no domain is
// enabled, so few arrive).
//
// Chromium skips the test when no chromium executable is on $PATH (CI installs
// one: apt-get install chromium). The package uses the standard library only.
package browser

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Chromium returns the path of the chromium executable, and skips t when
// there is none on $PATH.
func Chromium(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	return path
}

// Browser is one headless Chromium process with an empty profile. Its
// methods are not safe for concurrent use: a test drives it from one
// goroutine.
type Browser struct {
	cmd      *exec.Cmd
	toChrome *os.File      // our end of Chromium's fd 3
	fromRd   *os.File      // our end of Chromium's fd 4
	r        *bufio.Reader // reads fromRd
	id       int           // the last command's id
	stderr   stderrBuf
	stop     func() // ends Chromium; run once, by Close
	stopOnce sync.Once
}

// Start starts Chromium at path, headless, with flags added to its command
// line (for example "--ignore-certificate-errors", "--disable-quic"). It
// fails t when Chromium cannot start. When the test ends Chromium is asked to
// close, and killed if it has not exited within 10 seconds.
func Start(t testing.TB, path string, flags ...string) *Browser {
	t.Helper()
	cmdIn, toChrome, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fromRd, cmdOut, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--remote-debugging-pipe", "--user-data-dir=" + t.TempDir()}, flags...)
	b := &Browser{toChrome: toChrome, fromRd: fromRd, r: bufio.NewReader(fromRd)}
	b.cmd = exec.CommandContext(ctx, path, append(args, "about:blank")...)
	b.cmd.ExtraFiles = []*os.File{cmdIn, cmdOut} // fd 3, fd 4
	b.cmd.Stderr = &b.stderr
	// Chromium's helper processes inherit its stderr; Wait stops waiting for
	// them to close it this long after Chromium itself has exited.
	b.cmd.WaitDelay = 5 * time.Second
	if err := b.cmd.Start(); err != nil {
		cancel()
		toChrome.Close()
		fromRd.Close()
		cmdIn.Close()
		cmdOut.Close()
		t.Fatal(err)
	}
	// The child holds its own copies; closing ours lets a read see EOF when
	// Chromium exits.
	cmdIn.Close()
	cmdOut.Close()
	b.stop = func() {
		// Browser.close ends Chromium and its helper processes in order; a
		// kill is the fallback for a browser that does not answer.
		_ = b.Call(time.Now().Add(5*time.Second), "", "Browser.close", nil, nil)
		done := make(chan struct{})
		go func() {
			_ = b.cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cancel()
			<-done
		}
		cancel()
		toChrome.Close()
		fromRd.Close()
	}
	t.Cleanup(b.Close)
	return b
}

// Close ends Chromium (Browser.close, then a kill if it does not exit within
// 10 s) and waits for it to exit, so that whatever it writes on exit (a
// --log-net-log file) is complete. The test's cleanup calls it too; a second
// call does nothing.
func (b *Browser) Close() { b.stopOnce.Do(b.stop) }

// ProtocolError is an error that Chromium reported in its reply to a
// command, or an exception thrown by an evaluated expression. Chromium is
// still running and answering; the same command may succeed later (a page
// that is navigating answers "Cannot find context with specified id" until
// its new document exists).
type ProtocolError struct {
	Method  string // the command, e.g. "Runtime.evaluate"
	Message string // Chromium's message, or the exception's text
}

func (e *ProtocolError) Error() string { return e.Method + ": " + e.Message }

// Call sends one command and decodes its result into out (nil: discard it),
// skipping the events that arrive before the reply. The command goes to the
// browser when session is "", else to that tab's session (Page.Session).
// params is marshalled as the command's params (nil: none). Call gives up at
// deadline. An error Chromium answers with is a *ProtocolError; any other
// error means the pipe failed or Chromium exited, and the error then carries
// the end of Chromium's stderr.
func (b *Browser) Call(deadline time.Time, session, method string, params, out any) error {
	b.id++
	msg := map[string]any{"id": b.id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if session != "" {
		msg["sessionId"] = session
	}
	req, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if err := b.toChrome.SetWriteDeadline(deadline); err != nil {
		return err
	}
	if _, err := b.toChrome.Write(append(req, 0)); err != nil {
		return fmt.Errorf("%s: %w (chromium stderr: %s)", method, err, b.stderr.tail())
	}
	if err := b.fromRd.SetReadDeadline(deadline); err != nil {
		return err
	}
	for {
		frame, err := b.r.ReadBytes(0)
		if err != nil {
			return fmt.Errorf("%s: %w (chromium stderr: %s)", method, err, b.stderr.tail())
		}
		var reply struct {
			ID     int             `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(frame[:len(frame)-1], &reply); err != nil {
			return fmt.Errorf("%s: bad reply %q: %w", method, frame, err)
		}
		if reply.ID != b.id { // an event (no id), or a reply given up on
			continue
		}
		if reply.Error != nil {
			return &ProtocolError{Method: method, Message: reply.Error.Message}
		}
		if out == nil {
			return nil
		}
		return json.Unmarshal(reply.Result, out)
	}
}

// Page is one tab of a Browser, attached for commands.
type Page struct {
	b *Browser
	// Session is the tab's DevTools session, for Browser.Call.
	Session string
}

// Open opens url in a new tab and attaches to it. It returns once the tab
// exists, not once the page has loaded: Poll waits for that.
func (b *Browser) Open(deadline time.Time, url string) (*Page, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(deadline, "", "Target.createTarget", map[string]any{"url": url}, &target); err != nil {
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	err := b.Call(deadline, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	if err != nil {
		return nil, err
	}
	return &Page{b: b, Session: attached.SessionID}, nil
}

// Eval evaluates a JavaScript expression in the tab's current document and
// returns its value, which must be a string (any other type reads as "").
// An exception the expression throws is a *ProtocolError.
func (p *Page) Eval(deadline time.Time, expr string) (string, error) {
	var res struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception *struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := p.b.Call(deadline, p.Session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res); err != nil {
		return "", err
	}
	if d := res.ExceptionDetails; d != nil {
		msg := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			msg += " " + d.Exception.Description
		}
		return "", &ProtocolError{Method: "Runtime.evaluate", Message: msg}
	}
	return res.Result.Value, nil
}

// PollInterval is how long Poll waits between two evaluations.
const PollInterval = 50 * time.Millisecond

// Poll evaluates expr (as Eval does) every PollInterval until done reports
// that its value has settled, and returns that value. It stops at once with
// the error done returns, or with an error that is not a *ProtocolError
// (Chromium exited or its pipe failed); a *ProtocolError (no document yet, a
// navigation in progress) is retried. At deadline it returns the last value
// seen and an error naming it and the last *ProtocolError.
//
// done sees every value read: it returns true when the page has reached a
// final state (whether the one the test wants or a failure the page
// reports), so the caller checks that value and a page that reports an
// error fails at once instead of at deadline.
func (p *Page) Poll(deadline time.Time, expr string, done func(value string) (bool, error)) (string, error) {
	var last string
	var lastErr error
	for {
		v, err := p.Eval(deadline, expr)
		var perr *ProtocolError
		switch {
		case err == nil:
			last, lastErr = v, nil
			ok, err := done(v)
			if err != nil {
				return v, err
			}
			if ok {
				return v, nil
			}
		case errors.As(err, &perr):
			lastErr = err
		case errors.Is(err, os.ErrDeadlineExceeded):
			// Eval gave up at the deadline: the poll's timeout, below.
		default:
			return last, err
		}
		if !time.Now().Add(PollInterval).Before(deadline) {
			return last, fmt.Errorf("not settled by the deadline: last value %q (last error: %v)", last, lastErr)
		}
		time.Sleep(PollInterval)
	}
}

// stderrBuf keeps the last stderrKeep bytes Chromium wrote to its stderr. It
// is written by exec's copying goroutine and read by Call's error path.
type stderrBuf struct {
	mu  sync.Mutex
	buf []byte
}

const stderrKeep = 8 << 10

func (s *stderrBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	if over := len(s.buf) - stderrKeep; over > 0 {
		s.buf = append(s.buf[:0], s.buf[over:]...)
	}
	return len(p), nil
}

// tail returns a copy of what is kept.
func (s *stderrBuf) tail() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.buf)
}
