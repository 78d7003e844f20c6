package load

import (
	"sync/atomic"
	"time"

	"github.com/celeris-dev/celeris/bench/internal/wsclient"
)

// driver is what Run drives: the HTTP Pool or the WebSocket WSPool.
type driver interface {
	Grow(n int)
	Stop() bool
	Size() int
}

// wsDialers is how many connections a WSPool dials at once.
const wsDialers = 16

// wsPollTimeout is how long a WebSocket loop waits for events before it looks
// for new connections and for Stop.
const wsPollTimeout = 10 // ms

// WSPool runs WebSocket echo clients: each connection sends Target.Message as
// one masked binary frame, waits for the whole echo, records the round trip,
// and sends again (round trips, not pipelining). The connections are driven
// by a few event loops (one per loader core, each an epoll loop on a locked
// thread) rather than a goroutine each, so 10,000 connections cost the loader
// little more than one. Grow dials synchronously; a connection that fails
// (dial, handshake, a wrong echo, a close) is counted in Failed and not
// dialled again.
//
// With Idle, a connection makes one round trip and then stays quiet (for
// measuring what idle connections cost the server).
type WSPool struct {
	t     Target
	rec   *Recorder
	frame []byte // the masked client frame, shared read-only
	idle  bool
	n     int

	stopped  atomic.Bool
	going    atomic.Bool // Grow has dialled everything: connections send
	failed   atomic.Int64
	answered atomic.Int64 // connections that completed at least one round trip
	firstErr atomic.Pointer[error]

	loops []*wsLoop // platform-specific
}

// NewWSPool returns a pool with no connections, driven by loops event loops.
func NewWSPool(t Target, rec *Recorder, loops int, idle bool) *WSPool {
	p := &WSPool{t: t, rec: rec, idle: idle, frame: wsclient.AppendFrame(nil, wsclient.OpBinary, t.Message)}
	p.start(max(loops, 1))
	return p
}

// Size returns the number of connections asked for.
func (p *WSPool) Size() int { return p.n }

// Failed returns how many connections failed so far.
func (p *WSPool) Failed() int64 { return p.failed.Load() }

// Answered returns how many connections completed a round trip so far.
func (p *WSPool) Answered() int64 { return p.answered.Load() }

// FirstError returns the first failure, or nil.
func (p *WSPool) FirstError() error {
	if e := p.firstErr.Load(); e != nil {
		return *e
	}
	return nil
}

// fail counts a failed connection (unless the pool is stopping).
func (p *WSPool) fail(err error) {
	if p.stopped.Load() {
		return
	}
	p.failed.Add(1)
	p.firstErr.CompareAndSwap(nil, &err)
}

// waitAnswered waits until every connection made a round trip or failed, or
// timeout passed; it reports whether all did.
func (p *WSPool) waitAnswered(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for p.answered.Load()+p.failed.Load() < int64(p.n) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// WaitAnswered is waitAnswered for callers outside the package (the idle
// measurement).
func (p *WSPool) WaitAnswered(timeout time.Duration) bool { return p.waitAnswered(timeout) }
