package h1

// outboundHigh is the output bound of a connection: the output not yet taken by
// the socket (queued in the engine, or handed to the loop and not yet written)
// above which a connection stops parsing requests and streaming handlers wait,
// until it drained below half of it. Smaller is also faster for a client that
// reads at once: the demo's 64 MiB /download to curl over loopback went at
// 1.3-3.0 GB/s with 512 KiB and at 0.44-0.76 GB/s with 1 MiB (2-vCPU VM shared
// with other work, 2026-11-28), the output staying in the CPU's caches.
const outboundHigh = 512 << 10

// waitOutput blocks a streaming handler while the connection's unsent output (what
// the engine held after its last write and what waits in ready) is above
// outboundHigh (worker side). The loop reports the engine's level after every
// flush.
func (cn *Conn) waitOutput() {
	if cn.outbound == nil {
		return
	}
	cn.mu.Lock()
	for cn.queued+len(cn.ready) > outboundHigh && !cn.closed {
		cn.waiters++
		if cn.waiters == 1 {
			// The loop may have asked DrainLevel before this wait began: wake it
			// so that it arms its drain watch for this level.
			cn.c.Wake()
		}
		cn.outCond.Wait()
		cn.waiters--
	}
	cn.mu.Unlock()
}

// DrainLevel is the engine output level the connection waits for (event loop,
// engine's drain watch): half of outboundHigh while a streaming handler waits,
// outboundHigh while parsing waits, else -1.
func (cn *Conn) DrainLevel() int {
	cn.mu.Lock()
	w := cn.waiters
	cn.mu.Unlock()
	switch {
	case w > 0:
		return outboundHigh / 2
	case cn.outHeld:
		return outboundHigh
	}
	return -1
}

// AfterFlush records how much output the engine still holds (event loop, after each
// write) and releases waiting streaming handlers once it drained below half.
func (cn *Conn) AfterFlush(outbound int) {
	cn.mu.Lock()
	cn.queued = outbound
	if outbound <= outboundHigh/2 && cn.waiters > 0 { // waiters count under mu before they wait
		cn.outCond.Broadcast()
	}
	cn.mu.Unlock()
}
