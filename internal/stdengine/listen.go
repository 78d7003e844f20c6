package stdengine

import (
	"context"
	"net"
	"syscall"
)

// listen opens the engine's listener: SO_REUSEADDR as net.Listen sets it, and
// SO_REUSEPORT when asked (where the OS has it; see reuseport_*.go).
func (e *Engine) listen() (net.Listener, error) {
	if e.cfg.Listener != nil {
		return e.cfg.Listener, nil
	}
	lc := net.ListenConfig{}
	if e.cfg.ReusePort {
		lc.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) { serr = setReusePort(fd) }); err != nil {
				return err
			}
			return serr
		}
	}
	return lc.Listen(context.Background(), "tcp", e.cfg.Addr)
}
