package ws

import (
	"errors"
	"time"

	"github.com/celeris-dev/celeris/internal/bufpool"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// OnWake writes what the application queued (httpmsg.Proto; loop).
func (c *Conn) OnWake() error {
	if c.closeExpired.Load() {
		c.sendFail(true)
		c.t.Close() // the client never answered our close frame
		return nil
	}
	c.sendFail(false)
	if c.failed {
		return nil
	}
	c.mu.Lock()
	out := c.out
	c.out = c.spare[:0]
	c.spare = nil
	closeReq, want := c.closeReq, c.wantClose
	c.closeReq = nil
	c.mu.Unlock()
	c.writeOut(out)
	if want && closeReq != nil && !c.closeSent {
		c.closeSent = true
		c.t.Write(closeReq)
		time.AfterFunc(closeTimeout, func() {
			c.closeExpired.Store(true)
			c.t.Wake()
		})
	}
	return nil
}

// takeOut moves what the application wrote to the transport (loop).
func (c *Conn) takeOut() {
	c.mu.Lock()
	c.taking = false // from now on, a write wakes the loop
	out := c.out
	if len(out) == 0 {
		c.mu.Unlock()
		return
	}
	c.out = c.spare[:0]
	c.spare = nil
	c.mu.Unlock()
	c.writeOut(out)
}

// writeOut hands out to the transport and keeps or pools the buffer it gets
// back (loop).
func (c *Conn) writeOut(out []byte) {
	if len(out) > 0 && !c.closeSent {
		// Handed over, not copied (the engine keeps it as its batch when that is
		// empty, and gives its old buffer back; the gnet engine puts a large
		// batch back into bufpool once written: PoolOutput).
		out = httpmsg.WriteOwned(c.t, out)
	}
	// out is now nobody's: a small one is the next spare, a large one goes
	// back to the pool rather than stay with the connection.
	if cap(out) > keepBuf {
		bufpool.Put(out)
	} else if out != nil {
		c.mu.Lock()
		if c.spare == nil {
			c.spare = out[:0]
		}
		c.mu.Unlock()
	}
}

// PoolOutput tells the engine to put a large output batch back into bufpool once
// it is written, rather than keep it for the connection's next write.
func (c *Conn) PoolOutput() {}

// AfterFlush records how much output the engine still holds and releases blocked
// writers once it drained (loop).
func (c *Conn) AfterFlush(outbound int) {
	c.outbound = outbound
	c.mu.Lock()
	c.held = outbound
	if outbound+len(c.out) <= outHigh/2 {
		c.cond.Broadcast()
	}
	c.mu.Unlock()
}

// DrainLevel is the output level a blocked writer waits for (-1: none).
func (c *Conn) DrainLevel() int {
	if c.outbound > outHigh/2 {
		return outHigh / 2
	}
	return -1
}

// WriteMessage sends a whole text or binary message (any goroutine). It blocks
// while the client is more than 1 MiB behind; a message larger than writePiece
// leaves in fragments, each queued as the client takes the output, so p is
// borrowed until WriteMessage returns and never copied whole (a compressed
// message is compressed whole first).
func (c *Conn) WriteMessage(op Opcode, p []byte) error {
	if op != OpText && op != OpBinary {
		return errors.New("websocket: WriteMessage needs a text or binary opcode")
	}
	return c.writeFrame(op, p)
}

// Ping sends a ping with payload p (at most 125 bytes).
func (c *Conn) Ping(p []byte) error {
	if len(p) > 125 {
		return ErrControlTooLong
	}
	return c.writeFrame(OpPing, p)
}

func (c *Conn) writeFrame(op Opcode, p []byte) error {
	rsv1 := false
	if c.cfg.Deflate != nil && !op.IsControl() {
		// RFC 7692 §6.1: compressed, with RSV1 on the first frame.
		p, rsv1 = c.cfg.Deflate.Compress(make([]byte, 0, len(p)/2+16), p), true
	}
	if op.IsControl() || len(p) <= writePiece {
		return c.putFrame(true, rsv1, op, p, frameWhole)
	}
	// RFC 6455 §5.4: a large message leaves as fragments of writePiece bytes, each
	// queued once the client took the output before it, so that the connection
	// holds no more than outHigh of it. The fragments of one message are not
	// interleaved with another's (control frames may go between them).
	for first := true; ; first = false {
		n := min(len(p), writePiece)
		fop, kind := op, frameFirst
		if !first {
			fop, kind = OpContinuation, frameNext
		}
		if err := c.putFrame(n == len(p), rsv1 && first, fop, p[:n], kind); err != nil {
			if !first {
				c.mu.Lock()
				c.fragmenting = false // the message is cut short; the connection is failing
				c.cond.Broadcast()
				c.mu.Unlock()
			}
			return err
		}
		if p = p[n:]; len(p) == 0 {
			return nil
		}
	}
}

// writePiece is the largest frame a writer queues: a larger message is
// fragmented.
const writePiece = 256 << 10

// What putFrame queues: a whole message (or a control frame), the first fragment
// of a fragmented message, or one of its later fragments.
const (
	frameWhole = iota
	frameFirst
	frameNext
)

// putFrame queues one frame once the output queued before it is within outHigh.
// A data frame that starts a message waits while another writer's fragmented
// message is in progress; the first fragment of one marks it in progress and its
// last fragment ends it.
func (c *Conn) putFrame(fin, rsv1 bool, op Opcode, p []byte, kind int) error {
	c.mu.Lock()
	for {
		switch {
		case c.gone || c.wantClose:
			c.mu.Unlock()
			return ErrClosed
		case !c.writeDL.IsZero() && !time.Now().Before(c.writeDL):
			c.mu.Unlock()
			return ErrDeadline
		}
		if c.held+len(c.out) <= outHigh && (kind == frameNext || op.IsControl() || !c.fragmenting) {
			break
		}
		c.cond.Wait()
	}
	switch {
	case kind == frameFirst:
		c.fragmenting = true
	case kind == frameNext && fin:
		c.fragmenting = false
		c.cond.Broadcast()
	}
	wake := len(c.out) == 0 && !c.taking
	c.grow(len(p))
	c.out = AppendHeader(c.out, fin, rsv1, op, len(p), false, [4]byte{})
	c.out = append(c.out, p...)
	c.mu.Unlock()
	if wake {
		c.t.Wake()
	}
	return nil
}

// grow makes room in out for a frame of n payload bytes (mu held): past keepBuf
// the output moves to a pooled buffer (bufpool), which goes back to the pool once
// written, instead of growing a buffer that would stay with the connection.
func (c *Conn) grow(n int) {
	need := len(c.out) + n + MaxHeaderLen
	if need <= cap(c.out) || need <= keepBuf {
		return
	}
	b := append(bufpool.Get(need), c.out...)
	switch {
	case cap(c.out) > keepBuf:
		bufpool.Put(c.out)
	case c.out != nil && c.spare == nil:
		c.spare = c.out[:0]
	}
	c.out = b
}
