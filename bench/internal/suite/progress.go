package suite

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/report"
)

// console prints result lines, and on a terminal a live progress line
// redrawn in place with \r. It is safe for concurrent use.
type console struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool // draw the progress line
	shown int  // width of the progress line on screen, 0 if none
	last  time.Time
}

// isTerminal reports whether f is a character device (a terminal), without
// pulling in a terminal package.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func newConsole(w io.Writer, mode string) *console {
	live := mode == "on"
	if mode == "auto" {
		f, ok := w.(*os.File)
		live = ok && isTerminal(f)
	}
	return &console{w: w, live: live}
}

// progress redraws the live line, at most ten times a second.
func (c *console) progress(fw, sc, proto string, clients int, rps float64, p95 time.Duration) {
	if !c.live {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); now.Sub(c.last) >= 100*time.Millisecond {
		c.last = now
		line := fmt.Sprintf("%-14s %-8s %-3s  clients %5d  rps %10s  p95 %s",
			fw, sc, proto, clients, report.Thousands(rps), report.FormatMs(float64(p95.Microseconds())/1000))
		pad := max(c.shown-len(line), 0)
		fmt.Fprintf(c.w, "\r%s%s", line, strings.Repeat(" ", pad))
		c.shown = len(line)
	}
}

// printf clears the live line, then prints a whole line.
func (c *console) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.shown > 0 {
		fmt.Fprintf(c.w, "\r%s\r", strings.Repeat(" ", c.shown))
		c.shown = 0
	}
	fmt.Fprintf(c.w, format+"\n", args...)
}
