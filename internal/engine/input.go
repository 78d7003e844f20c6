//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package engine

// The engine's input buffer.
//
// gnet reads up to 64 KiB at a time into its loop's read buffer, calls OnTraffic,
// and copies what the callback did not consume into the connection's ring buffer.
// When that ring buffer wraps, Peek copies it into a fresh slice which gnet never
// reuses, and when it empties, gnet returns it to a pool that the next garbage
// collection clears, so it grows again from a few KiB. Under a fast upload whose
// handler reads a little slower than the client sends, that comes to 200 MB of
// garbage per GiB of body (a 128 KiB copy on every wake-up of the loop, and ring
// buffers grown again and again): the heap, and with it the process's RSS, grows by
// some 20 MB at loopback speed.
//
// So the engine keeps what the protocol leaves unconsumed itself, in a buffer of
// its own (conn.in), and gnet's ring buffer stays empty: the protocol is presented
// gnet's read buffer directly (no copy) when the engine holds nothing, and the
// engine's buffer, with the new bytes appended, when it does. Those bytes are
// copied once, as gnet would copy them into its ring; the buffer is compacted only
// when the new bytes do not fit behind the unread ones, and it goes back to a small
// per-loop free list as soon as it is empty, so that steady traffic allocates
// nothing. What it holds is bounded by MaxBufferedInput plus one read, since
// reading pauses past MaxBufferedInput (pause.go).

const (
	maxFreeInput = 4       // empty buffers kept per event loop
	minInputBuf  = 4 << 10 // the smallest buffer made (a partial request head)
)

// buffered is how much received input the protocol has not consumed (loop only).
func (c *conn) buffered() int {
	return len(c.in) - c.inOff + c.gc.InboundBuffered()
}

// peek presents at most Config.PeekWindow buffered bytes: from the engine's buffer
// when it holds any (gnet's new bytes appended), otherwise gnet's read buffer as it
// is. fromGnet says which one consume must advance.
func (c *conn) peek() (buf []byte, fromGnet bool) {
	window := c.eng.cfg.PeekWindow
	if c.inOff < len(c.in) {
		c.takeInput()
		return c.in[c.inOff:min(len(c.in), c.inOff+window)], false
	}
	n := c.gc.InboundBuffered()
	if n == 0 {
		return nil, false
	}
	// gnet's ring buffer is empty (takeInput leaves it so): this is its read
	// buffer, not a copy.
	buf, _ = c.gc.Peek(min(n, window))
	return buf, true
}

// consume drops n bytes the protocol took from what peek presented.
func (c *conn) consume(n int, fromGnet bool) {
	if n <= 0 {
		return
	}
	if fromGnet {
		_, _ = c.gc.Discard(n)
		return
	}
	c.inOff += n
	if c.inOff >= len(c.in) {
		c.releaseInput()
	}
}

// takeInput moves what gnet holds into the engine's buffer, so that gnet's ring
// buffer never fills (loop only).
func (c *conn) takeInput() {
	n := c.gc.InboundBuffered()
	if n == 0 {
		return
	}
	b, err := c.gc.Peek(n)
	if err != nil {
		return
	}
	if c.in == nil {
		c.in = c.loop.getInput(len(b))
	}
	if c.inOff > 0 && cap(c.in)-len(c.in) < len(b) {
		k := copy(c.in, c.in[c.inOff:])
		c.in, c.inOff = c.in[:k], 0
	}
	c.in = append(c.in, b...)
	_, _ = c.gc.Discard(n)
}

// releaseInput gives the engine's buffer back to the loop's free list, which
// keeps at most twice MaxBufferedInput in all (a buffer grows past that only when
// pausing is unavailable, pause.go): an idle server keeps little.
func (c *conn) releaseInput() {
	if c.in != nil {
		c.loop.putInput(c.in, 2*c.eng.cfg.MaxBufferedInput)
	}
	c.in, c.inOff = nil, 0
}

// getInput returns an empty buffer from the free list, or a new one (loop only).
func (ls *loopState) getInput(need int) []byte {
	if n := len(ls.freeIn); n > 0 {
		b := ls.freeIn[n-1]
		ls.freeIn[n-1] = nil
		ls.freeIn = ls.freeIn[:n-1]
		ls.freeInBytes -= cap(b)
		return b
	}
	return make([]byte, 0, max(need, minInputBuf))
}

// putInput keeps b for reuse unless the free list would hold more than maxFreeInput
// buffers or maxBytes (loop only).
func (ls *loopState) putInput(b []byte, maxBytes int) {
	if len(ls.freeIn) < maxFreeInput && ls.freeInBytes+cap(b) <= maxBytes {
		ls.freeIn = append(ls.freeIn, b[:0])
		ls.freeInBytes += cap(b)
	}
}
