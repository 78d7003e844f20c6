package ws

import (
	"errors"
	"time"

	"github.com/celeris-dev/celeris/internal/bufpool"
)

// schedule starts a worker for the application when it has work and none runs
// (mu held).
func (c *Conn) schedule() {
	if c.running {
		return
	}
	if c.app.Handler != nil {
		if c.dispatched {
			return
		}
		c.dispatched = true
	} else if c.openDone && c.qhead == len(c.queue) && (!c.gone || c.closeDone) {
		return
	}
	c.running = true
	if c.cfg.Pool == nil {
		go c.task.Run()
		return
	}
	if !c.cfg.Pool.Submit(&c.task) {
		c.running = false
		c.refused()
	}
}

// refused handles a pool that has no worker for the application (mu held):
// it is at the server's MaxWorkers, or stopped (shutdown). An application that
// has not started never will: the client gets close 1013 (try again later; RFC
// 6455 §7.4.1, IANA registry) or 1001 (going away), and the application hears
// nothing. One that started (callbacks: OnOpen ran) is closed the same way and
// still gets its OnClose, on a goroutine of its own once the connection is gone:
// a short call, once per connection already admitted, which its cleanup needs.
func (c *Conn) refused() {
	if c.app.Handler != nil || !c.openDone {
		c.openDone, c.closeDone = true, true // never started: nothing to tell it
		c.dispatched = true
	}
	if c.gone {
		if !c.closeDone {
			c.running = true
			go c.task.Run()
		}
		return
	}
	if !c.wantClose && c.failReq == nil {
		code, reason := CloseTryAgainLater, "server busy"
		if c.cfg.Pool.Stopped() {
			code, reason = CloseGoingAway, "server shutting down"
		}
		c.wantClose = true
		c.closeReq = AppendClose(nil, code, reason)
		c.setClose(code, reason)
		c.t.Wake()
	}
}

type appTask struct{ c *Conn }

// Run serves the application on a worker.
func (t *appTask) Run() {
	c := t.c
	if c.app.Handler != nil {
		c.runHandler()
		return
	}
	c.runCallbacks()
}

func (c *Conn) runHandler() {
	defer func() {
		if p := recover(); p != nil {
			c.Close(CloseInternalError, "")
		}
		c.Close(CloseNormal, "")
		c.mu.Lock()
		c.running = false
		c.closeDone = true
		c.mu.Unlock()
		c.t.Wake()
	}()
	c.app.Handler(c)
}

func (c *Conn) runCallbacks() {
	for {
		c.mu.Lock()
		switch {
		case !c.openDone:
			c.openDone = true
			c.mu.Unlock()
			if c.app.OnOpen != nil {
				c.app.OnOpen(c)
			}
			continue
		case c.qhead < len(c.queue):
			m := c.pop()
			c.mu.Unlock()
			if c.inflate(&m) != nil {
				continue
			}
			err := c.callMessage(m)
			c.recycle(m.buf)
			if err != nil {
				code := CloseInternalError
				var ce *CloseError
				if errors.As(err, &ce) {
					code = ce.Code
				}
				c.Close(code, "")
			}
			continue
		case c.gone && !c.closeDone:
			c.closeDone = true
			code, why := c.closeCode, c.closeWhy
			c.mu.Unlock()
			if c.app.OnClose != nil {
				c.app.OnClose(c, code, why)
			}
			continue
		}
		c.running = false
		// The loop needs to hear of the end only when input waits for the
		// queue to shrink, or a failed connection for the application to
		// catch up (sendFail); a written answer woke it already.
		wake := c.inWait || c.failReq != nil
		c.inWait = false
		c.mu.Unlock()
		if wake {
			c.t.Wake()
		}
		return
	}
}

func (c *Conn) callMessage(m message) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = errors.New("websocket: OnMessage panicked")
		}
	}()
	if c.app.OnMessage == nil {
		return nil
	}
	return c.app.OnMessage(c, m.op, m.buf)
}

// pop takes the first queued message (mu held).
func (c *Conn) pop() message {
	m := c.queue[c.qhead]
	c.queue[c.qhead] = message{}
	c.qhead++
	if c.qhead == len(c.queue) {
		c.queue, c.qhead = c.queue[:0], 0
	}
	c.queued -= len(m.buf)
	return m
}

// recycle keeps a small message buffer for reuse, and gives a large one back to
// the pool.
func (c *Conn) recycle(b []byte) {
	if cap(b) > keepBuf {
		bufpool.Put(b)
		return
	}
	c.mu.Lock()
	c.keep(b)
	c.mu.Unlock()
}

// keep holds b for a later message (mu held): up to 4 small buffers; a large
// one goes back to the pool.
func (c *Conn) keep(b []byte) {
	switch {
	case cap(b) > keepBuf:
		bufpool.Put(b)
	case len(c.free) < 4:
		c.free = append(c.free, b)
	}
}

// ReadMessage waits for the next message (blocking handlers only). The payload is
// valid until the next ReadMessage. After the peer's close frame it returns a
// *CloseError; once the connection is gone, ErrClosed.
func (c *Conn) ReadMessage() (Opcode, []byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.current != nil {
		c.keep(c.current)
		c.current = nil
	}
	for c.qhead == len(c.queue) {
		switch {
		case c.failReq != nil:
			c.failSeen = true // the loop sends the close frame after our answers
			c.t.Wake()
			if c.peerErr != nil {
				return 0, nil, c.peerErr // the peer's close waits for its reply
			}
			return 0, nil, ErrClosed
		case c.peerErr != nil:
			return 0, nil, c.peerErr
		case c.gone || c.wantClose && !c.draining:
			// A shutdown's close (Drain) waits for the peer's answer, so
			// that the handler learns its code (the case above).
			return 0, nil, ErrClosed
		case !c.readDL.IsZero() && !time.Now().Before(c.readDL):
			return 0, nil, ErrDeadline
		}
		c.cond.Wait()
	}
	m := c.pop()
	if m.comp {
		c.mu.Unlock()
		err := c.inflate(&m)
		c.mu.Lock()
		if err != nil {
			return 0, nil, ErrClosed
		}
	}
	c.current = m.buf
	if c.inWait && c.queued <= inHigh {
		c.inWait = false
		c.t.Wake() // the loop left input unread
	}
	return m.op, m.buf, nil
}

// inflate turns a compressed message into its payload on the application's
// goroutine (a large message would hold the event loop), checking its size and,
// for text, its UTF-8. A bad one fails the connection: 1007, or 1009 when too big.
func (c *Conn) inflate(m *message) error {
	if !m.comp {
		return nil
	}
	out, err := c.cfg.Deflate.Inflate(make([]byte, 0, max(4*len(m.buf), 256)), m.buf, c.cfg.MaxMessage)
	c.recycle(m.buf)
	m.buf, m.comp = out, false
	if err == nil && m.op == OpText && !ValidUTF8(out) {
		err = ErrBadUTF8
	}
	if err != nil {
		code := CloseCodeFor(err)
		if errors.Is(err, ErrInflate) {
			code = CloseInvalidPayload
		}
		c.failApp(code, err.Error())
	}
	return err
}

// failApp fails the connection from the application's side: the messages still
// queued are dropped, and the loop sends the close frame after what the
// application wrote.
func (c *Conn) failApp(code int, reason string) {
	c.mu.Lock()
	if c.failReq == nil && !c.wantClose && !c.gone {
		c.setClose(code, reason)
		c.failReq = AppendClose(nil, code, reason)
		c.failSeen = true
		for c.qhead < len(c.queue) {
			c.pop()
		}
		c.cond.Broadcast()
		time.AfterFunc(closeTimeout, func() {
			c.closeExpired.Store(true)
			c.t.Wake()
		})
	}
	c.mu.Unlock()
	c.t.Wake()
}
