//go:build linux

package engine

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// ListenerFile returns a duplicate of the engine's listening socket, for a
// process that takes over the address (the server's Upgrade passes it on). The
// socket is gnet's own (gnetListeners); with ReusePort each event loop has one
// and there is no single socket to pass, so that is an error.
func (e *Engine) ListenerFile() (*os.File, error) {
	select {
	case <-e.booted:
	default:
		return nil, errors.New("celeris: the gnet engine does not listen yet")
	}
	e.lnMu.Lock()
	defer e.lnMu.Unlock()
	addr := e.addr.Load()
	if e.lnClosed || e.bootErr != nil || addr == nil || e.draining.Load() {
		return nil, errors.New("celeris: the gnet engine no longer listens")
	}
	fds, ok := gnetListeners(e.eng)
	if !ok {
		return nil, errors.New("celeris: gnet's listeners not found")
	}
	var mine []int
	for _, fd := range fds {
		if listensOn(fd, addr) {
			mine = append(mine, fd)
		}
	}
	if len(mine) != 1 {
		return nil, fmt.Errorf("celeris: the gnet engine has %d listening sockets (ReusePort); one is needed to pass it on", len(mine))
	}
	nfd, err := unix.FcntlInt(uintptr(mine[0]), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(nfd), "gnet-listener"), nil
}
