//go:build !linux && (darwin || dragonfly || freebsd || netbsd || openbsd)

package engine

import (
	"errors"
	"os"
)

// ListenerFile is Linux only (inherit_linux.go): gnet's listeners are found
// there only.
func (e *Engine) ListenerFile() (*os.File, error) {
	return nil, errors.New("celeris: passing the gnet engine's socket on is supported on Linux only")
}
