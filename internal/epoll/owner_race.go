//go:build linux && race

package epoll

import (
	"runtime"
	"sync/atomic"
)

// owner asserts, in race builds, that loop-owned state is touched by the
// loop's goroutine only (as x/net's http2 serverConn checks serveG): the
// httpmsg.Conn methods documented "loop only" panic when called from another
// goroutine (a handler's worker), which would race with the loop.
type owner struct{ id atomic.Int64 }

// claim makes the calling goroutine the owner (the loop, as it starts).
func (o *owner) claim() { o.id.Store(goid()) }

// check panics unless the caller is the owner (or none claimed yet).
func (o *owner) check(what string) {
	if id := o.id.Load(); id != 0 && id != goid() {
		panic("epoll: " + what + " called off the connection's event loop")
	}
}

// goid is the calling goroutine's id, read from its stack header
// ("goroutine 123 [running]:"): slow, and only in race builds.
func goid() int64 {
	var b [32]byte
	n := runtime.Stack(b[:], false)
	var id int64
	for _, c := range b[len("goroutine "):n] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + int64(c-'0')
	}
	return id
}
