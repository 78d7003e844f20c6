//go:build !linux

package load

import "errors"

// wsLoop is not used off Linux: the WebSocket driver needs epoll.
type wsLoop struct{}

var errNoEpoll = errors.New("load: the WebSocket driver needs Linux (epoll)")

func (p *WSPool) start(int) {}

// Grow counts every connection as failed: there is no driver here.
func (p *WSPool) Grow(n int) {
	for ; p.n < n; p.n++ {
		p.fail(errNoEpoll)
	}
}

// Stop has nothing to stop.
func (p *WSPool) Stop() bool {
	p.stopped.Store(true)
	return true
}
