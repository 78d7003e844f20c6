//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

import (
	"fmt"
	"log/slog"
)

// gnetLogger routes gnet's own warnings and errors to slog and drops its
// debug and info lines (gnet logs every start at info level).
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) Debugf(string, ...any) {}
func (g gnetLogger) Infof(string, ...any)  {}
func (g gnetLogger) Warnf(format string, args ...any) {
	g.l.Warn("gnet: " + fmt.Sprintf(format, args...))
}
func (g gnetLogger) Errorf(format string, args ...any) {
	g.l.Error("gnet: " + fmt.Sprintf(format, args...))
}
func (g gnetLogger) Fatalf(format string, args ...any) {
	g.l.Error("gnet: fatal: " + fmt.Sprintf(format, args...))
}
