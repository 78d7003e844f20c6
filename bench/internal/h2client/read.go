package h2client

import (
	"fmt"
	"strconv"

	"golang.org/x/net/http2"
)

// readLoop is the reader goroutine: it owns the Framer's read side, the
// hpack decoder and the receive-window accounting.
func (c *Conn) readLoop() {
	defer close(c.done)
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			c.fail(err)
			return
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			c.onHeaders(f)
		case *http2.DataFrame:
			c.onData(f)
		case *http2.SettingsFrame:
			if !f.IsAck() && c.onSettings(f) != nil {
				return
			}
		case *http2.WindowUpdateFrame:
			c.onWindowUpdate(f)
		case *http2.PingFrame:
			if !f.IsAck() {
				c.lockWrite()
				if c.unlockWrite(c.fr.WritePing(true, f.Data)) != nil {
					return
				}
			}
		case *http2.RSTStreamFrame:
			if st := c.lookup(f.StreamID); st != nil {
				c.finish(st, &StreamError{StreamID: f.StreamID, Code: f.ErrCode})
			}
		case *http2.GoAwayFrame:
			// Every GOAWAY ends the run of this connection; the workers dial again.
			c.fail(fmt.Errorf("%w: %v (last stream %d)", ErrGoAway, f.ErrCode, f.LastStreamID))
			return
		}
		// PRIORITY, PUSH_PROMISE (disabled by our SETTINGS) and unknown
		// frame types are ignored (RFC 9113 §5.5).
	}
}

func (c *Conn) lookup(id uint32) *stream {
	c.mu.Lock()
	st := c.streams[id]
	c.mu.Unlock()
	return st
}

// finish ends a stream once and hands its result to the waiting Do.
func (c *Conn) finish(st *stream, err error) {
	c.mu.Lock()
	if st.ended {
		c.mu.Unlock()
		return
	}
	st.ended = true
	delete(c.streams, st.id)
	c.active--
	c.cond.Broadcast()
	c.mu.Unlock()
	st.result <- err
}

func (c *Conn) onHeaders(f *http2.MetaHeadersFrame) {
	st := c.lookup(f.StreamID)
	if st == nil {
		return // a stream we no longer track; the decoder state is already updated
	}
	status, err := strconv.Atoi(f.PseudoValue("status"))
	if err != nil {
		c.finish(st, fmt.Errorf("h2client: stream %d: bad :status %q", f.StreamID, f.PseudoValue("status")))
		return
	}
	if status >= 200 && st.resp.Status == 0 {
		st.resp.Status = status // later HEADERS are trailers; 1xx are interim
	}
	if f.StreamEnded() {
		c.finish(st, nil)
	}
}

func (c *Conn) onData(f *http2.DataFrame) {
	// RFC 9113 §6.9: the whole frame payload, padding included, counts.
	n := int64(f.Length)
	c.connUnacked += n
	var streamCredit uint32
	if st := c.lookup(f.StreamID); st != nil {
		data := f.Data()
		st.resp.BodyLen += int64(len(data))
		if c.opts.Capture {
			st.resp.Body = append(st.resp.Body, data...)
		}
		if f.StreamEnded() {
			c.finish(st, nil)
		} else if st.unacked += n; st.unacked >= int64(c.opts.StreamWindow/2) {
			streamCredit, st.unacked = uint32(st.unacked), 0
		}
	}
	var connCredit uint32
	if c.connUnacked >= int64(c.opts.ConnWindow/2) {
		connCredit, c.connUnacked = uint32(c.connUnacked), 0
	}
	if streamCredit == 0 && connCredit == 0 {
		return
	}
	c.lockWrite()
	var err error
	if connCredit > 0 {
		err = c.fr.WriteWindowUpdate(0, connCredit)
	}
	if streamCredit > 0 && err == nil {
		err = c.fr.WriteWindowUpdate(f.StreamID, streamCredit)
	}
	c.unlockWrite(err)
}

// onSettings applies the server's SETTINGS and acknowledges them (RFC 9113
// §6.5.3). The encoder's table limit changes under the write lock, before the
// ACK, so no later header block uses a table larger than allowed.
func (c *Conn) onSettings(f *http2.SettingsFrame) error {
	c.lockWrite()
	c.mu.Lock()
	err := f.ForeachSetting(func(s http2.Setting) error {
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			c.maxConcurrent = int(min(s.Val, maxStreamID))
		case http2.SettingInitialWindowSize:
			// §6.9.2: the change applies to every open stream's send window.
			delta := int64(s.Val) - c.peerWindow
			for _, st := range c.streams {
				st.send += delta
			}
			c.peerWindow = int64(s.Val)
		case http2.SettingMaxFrameSize:
			c.peerMaxFrame = int(s.Val)
		case http2.SettingHeaderTableSize:
			c.henc.SetMaxDynamicTableSizeLimit(s.Val)
		}
		return nil
	})
	c.cond.Broadcast()
	c.mu.Unlock()
	if err == nil {
		err = c.fr.WriteSettingsAck()
	}
	if err = c.unlockWrite(err); err != nil {
		return err
	}
	c.settingsOnce.Do(func() { close(c.settings) })
	return nil
}

func (c *Conn) onWindowUpdate(f *http2.WindowUpdateFrame) {
	c.mu.Lock()
	if f.StreamID == 0 {
		c.connSend += int64(f.Increment)
	} else if st := c.streams[f.StreamID]; st != nil {
		st.send += int64(f.Increment)
	}
	c.cond.Broadcast()
	c.mu.Unlock()
}
