package demo

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// browser is headless Chromium driven over the DevTools protocol on
// --remote-debugging-pipe: Chromium reads NUL-terminated JSON commands on its
// fd 3 and writes NUL-terminated JSON replies and events on its fd 4. A test
// asks the page for its state until a condition holds, so a loaded machine
// makes it slower, never wrong (a --virtual-time-budget run instead ends after
// a fixed amount of page work, whether the page finished or not).
type browser struct {
	cmd      *exec.Cmd
	toChrome *os.File      // our end of Chromium's fd 3
	fromRd   *os.File      // our end of Chromium's fd 4
	r        *bufio.Reader // reads fromRd
	id       int
	stderr   strings.Builder
}

// startBrowser starts Chromium with an empty profile; it is killed when the
// test ends.
func startBrowser(t *testing.T, path string, flags ...string) *browser {
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
	b := &browser{toChrome: toChrome, fromRd: fromRd, r: bufio.NewReader(fromRd)}
	b.cmd = exec.CommandContext(ctx, path, append(args, "about:blank")...)
	b.cmd.ExtraFiles = []*os.File{cmdIn, cmdOut} // fd 3, fd 4
	b.cmd.Stderr = &b.stderr
	if err := b.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	// The child holds its own copies; closing ours lets a read see EOF when
	// Chromium exits.
	cmdIn.Close()
	cmdOut.Close()
	t.Cleanup(func() {
		cancel()
		_ = b.cmd.Wait()
		toChrome.Close()
		fromRd.Close()
	})
	return b
}

// call sends one command (to the browser when session is "", else to that
// page session) and decodes its result into out (nil: discard), skipping
// the events that arrive in between. It gives up at deadline.
func (b *browser) call(deadline time.Time, session, method string, params, out any) error {
	b.id++
	msg := map[string]any{"id": b.id, "method": method, "params": params}
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
		return fmt.Errorf("%s: %w (chromium stderr: %s)", method, err, b.stderr.String())
	}
	if err := b.fromRd.SetReadDeadline(deadline); err != nil {
		return err
	}
	for {
		frame, err := b.r.ReadBytes(0)
		if err != nil {
			return fmt.Errorf("%s: %w (chromium stderr: %s)", method, err, b.stderr.String())
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
		if reply.ID != b.id { // an event, or nothing we wait for
			continue
		}
		if reply.Error != nil {
			return fmt.Errorf("%s: %s", method, reply.Error.Message)
		}
		if out == nil {
			return nil
		}
		return json.Unmarshal(reply.Result, out)
	}
}

// open loads url in a new tab and returns the tab's session.
func (b *browser) open(deadline time.Time, url string) (string, error) {
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call(deadline, "", "Target.createTarget", map[string]any{"url": url}, &target); err != nil {
		return "", err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	err := b.call(deadline, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
	return attached.SessionID, err
}

// eval evaluates a JavaScript expression whose value is a string in the tab
// of session.
func (b *browser) eval(deadline time.Time, session, expr string) (string, error) {
	var res struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := b.call(deadline, session, "Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true}, &res); err != nil {
		return "", err
	}
	if res.ExceptionDetails != nil {
		return "", fmt.Errorf("evaluate %q: %s", expr, res.ExceptionDetails.Text)
	}
	return res.Result.Value, nil
}
