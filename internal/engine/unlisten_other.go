//go:build !linux && (darwin || dragonfly || freebsd || netbsd || openbsd)

package engine

// unlisten is Linux only (unlisten_linux.go). Elsewhere new connections that
// arrive during a graceful shutdown are accepted and closed at once (OnOpen).
func (e *Engine) unlisten() int { return 0 }
