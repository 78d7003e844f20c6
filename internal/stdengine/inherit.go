package stdengine

import (
	"errors"
	"net"
	"os"
)

// ListenerFile returns a duplicate of the engine's listening socket, for a
// process that takes over the address (the server's Upgrade passes it on).
func (e *Engine) ListenerFile() (*os.File, error) {
	if e.draining.Load() {
		return nil, errors.New("celeris: the engine no longer listens")
	}
	e.mu.Lock()
	ln := e.ln
	e.mu.Unlock()
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return nil, errors.New("celeris: the engine's listener is not a TCP socket")
	}
	return tl.File()
}
