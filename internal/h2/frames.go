package h2

import "github.com/celeris-dev/celeris/internal/h2/frame"

func connErr(code frame.ErrCode, reason string) error {
	return frame.ConnError{Code: code, Reason: reason}
}

func streamErr(id uint32, code frame.ErrCode, reason string) error {
	return frame.StreamError{StreamID: id, Code: code, Reason: reason}
}

// processFrame applies one inbound frame to the connection state.
func (c *Conn) processFrame(f *frame.Frame) error {
	// RFC 9113 §6.10: a header block is contiguous; any other frame in between is
	// a PROTOCOL_ERROR.
	if c.hb.active && (f.Type != frame.TypeContinuation || f.StreamID != c.hb.streamID) {
		return connErr(frame.ErrCodeProtocol, "frame interleaved in a header block")
	}
	if c.phase == phaseSettings {
		// RFC 9113 §3.4: the client preface ends with a SETTINGS frame.
		if f.Type != frame.TypeSettings || f.IsAck() {
			return connErr(frame.ErrCodeProtocol, "preface not followed by SETTINGS")
		}
		c.phase = phaseOpen
	}
	switch f.Type {
	case frame.TypeData:
		return c.onData(f)
	case frame.TypeHeaders:
		return c.onHeaders(f)
	case frame.TypeContinuation:
		if !c.hb.active {
			return connErr(frame.ErrCodeProtocol, "CONTINUATION without HEADERS")
		}
		return c.headerFragment(f.Data, f.EndHeaders())
	case frame.TypePriority:
		// RFC 9113 §5.3.1: a stream cannot depend on itself. Priority signals are
		// otherwise ignored (§5.3.2 deprecates them).
		if f.Priority.StreamDep == f.StreamID {
			return streamErr(f.StreamID, frame.ErrCodeProtocol, "stream depends on itself")
		}
		return nil
	case frame.TypeRSTStream:
		return c.onRSTStream(f)
	case frame.TypeSettings:
		if f.IsAck() {
			return nil
		}
		return c.applySettings(f, true)
	case frame.TypePushPromise:
		// RFC 9113 §8.4: a client cannot push.
		return connErr(frame.ErrCodeProtocol, "PUSH_PROMISE from a client")
	case frame.TypePing:
		if f.IsAck() {
			c.onGoAwayPingAck(f.PingData())
			return nil
		}
		if err := c.defenses.controlFrame(c); err != nil {
			return err
		}
		c.out = frame.AppendPing(c.out, true, f.PingData())
		return nil
	case frame.TypeGoAway:
		// The peer stops opening streams; the ones in flight finish normally.
		return nil
	case frame.TypeWindowUpdate:
		return c.onWindowUpdate(f)
	}
	// RFC 9113 §5.5: unknown frame types are ignored.
	return nil
}

// idle reports whether id names a stream the client never opened (RFC 9113 §5.1).
func (c *Conn) idle(id uint32) bool {
	return id%2 == 0 || id > c.maxStreamID
}

func (c *Conn) onRSTStream(f *frame.Frame) error {
	if c.idle(f.StreamID) {
		return connErr(frame.ErrCodeProtocol, "RST_STREAM on an idle stream")
	}
	s := c.streams[f.StreamID]
	if s == nil {
		if c.closedHow(f.StreamID) != 0 {
			// The peer closed it too: later frames from it are its error.
			c.remember(f.StreamID, closedByPeer)
		}
		return nil
	}
	unfinished := !s.localDone
	s.localDone = true
	c.closeStream(s, closedByPeer)
	if unfinished {
		return c.defenses.reset(c)
	}
	return nil
}

// applySettings applies a peer SETTINGS frame (RFC 9113 §6.5) and acknowledges it
// when ack is set (the HTTP2-Settings of an upgrade are acknowledged by the 101).
func (c *Conn) applySettings(f *frame.Frame, ack bool) error {
	for i := range f.NumSettings() {
		st := f.Setting(i)
		if err := st.Valid(); err != nil {
			return err
		}
		switch st.ID {
		case frame.SettingHeaderTableSize:
			// RFC 7541 §4.2: the encoder's table may not exceed the decoder's limit;
			// the encoder signals a size update in the next block.
			c.henc.SetMaxDynamicTableSizeLimit(st.Val)
			c.hc.ok = false
		case frame.SettingInitialWindowSize:
			// RFC 9113 §6.9.2: the change applies to every stream's send window,
			// which may go negative; one beyond 2^31-1 is a FLOW_CONTROL_ERROR.
			delta := int64(st.Val) - c.peerInitWindow
			c.peerInitWindow = int64(st.Val)
			for _, s := range c.streams {
				s.sendWindow += delta
				if s.sendWindow > frame.MaxWindow {
					return connErr(frame.ErrCodeFlowControl, "stream window above 2^31-1")
				}
			}
			if delta > 0 {
				c.sendqDirty = true
			}
		case frame.SettingMaxFrameSize:
			c.peerMaxFrame = st.Val
		}
		// ENABLE_PUSH (we never push), MAX_CONCURRENT_STREAMS (limits pushes),
		// MAX_HEADER_LIST_SIZE (advisory) and unknown settings need nothing.
	}
	if !ack {
		return nil
	}
	if err := c.defenses.controlFrame(c); err != nil {
		return err
	}
	c.out = frame.AppendSettingsAck(c.out)
	return nil
}

func (c *Conn) onWindowUpdate(f *frame.Frame) error {
	incr := int64(f.Increment)
	if f.StreamID == 0 {
		// RFC 9113 §6.9: a zero increment is a PROTOCOL_ERROR; §6.9.1: a window
		// beyond 2^31-1 is a FLOW_CONTROL_ERROR.
		if incr == 0 {
			return connErr(frame.ErrCodeProtocol, "WINDOW_UPDATE increment 0")
		}
		c.sendWindow += incr
		if c.sendWindow > frame.MaxWindow {
			return connErr(frame.ErrCodeFlowControl, "connection window above 2^31-1")
		}
		c.sendqDirty = true
		return nil
	}
	if c.idle(f.StreamID) {
		return connErr(frame.ErrCodeProtocol, "WINDOW_UPDATE on an idle stream")
	}
	s := c.streams[f.StreamID]
	if s == nil {
		return nil // closed: WINDOW_UPDATE may still arrive (RFC 9113 §6.9)
	}
	if incr == 0 {
		return streamErr(f.StreamID, frame.ErrCodeProtocol, "WINDOW_UPDATE increment 0")
	}
	s.sendWindow += incr
	if s.sendWindow > frame.MaxWindow {
		return streamErr(f.StreamID, frame.ErrCodeFlowControl, "stream window above 2^31-1")
	}
	if s.inSendq {
		c.sendqDirty = true
	}
	return nil
}

// onData receives a DATA frame (RFC 9113 §6.1). The whole payload, padding
// included, counts against both receive windows (§6.9).
func (c *Conn) onData(f *frame.Frame) error {
	id := f.StreamID
	n := int64(f.Length)
	if c.idle(id) {
		return connErr(frame.ErrCodeProtocol, "DATA on an idle stream")
	}
	if n > c.recvWindow {
		return connErr(frame.ErrCodeFlowControl, "DATA beyond the connection window")
	}
	c.recvWindow -= n
	s := c.streams[id]
	if s == nil || s.remoteDone {
		// Discarded bytes go straight back to the connection window.
		c.recvCredit += n
		if s == nil && c.closedHow(id) == closedByUs {
			return nil // RFC 9113 §5.1: frames after our RST_STREAM are ignored
		}
		// RFC 9113 §5.1: DATA on a half-closed (remote) or closed stream is a
		// STREAM_CLOSED error.
		return streamErr(id, frame.ErrCodeStreamClosed, "DATA on a closed stream")
	}
	if n > s.recvWindow {
		c.recvCredit += n
		return streamErr(id, frame.ErrCodeFlowControl, "DATA beyond the stream window")
	}
	s.recvWindow -= n
	data := f.Data
	pad := n - int64(len(data))
	s.recvCredit += pad
	c.recvCredit += pad
	if len(data) == 0 && !f.EndStream() {
		if err := c.defenses.emptyFrame(c); err != nil {
			return err
		}
	}
	s.received += int64(len(data))
	// RFC 9113 §8.1.1: "A request or response is also malformed if the value of
	// a content-length header field does not equal the sum of the DATA frame
	// payload lengths that form the content": here more than declared.
	if s.declLen >= 0 && s.received > s.declLen {
		c.recvCredit += int64(len(data))
		c.badLength(s, "body longer than content-length")
		return nil
	}
	if s.draining {
		// Nobody reads this body any more (see maybeFinish).
		n := int64(len(data))
		s.recvCredit += n
		c.recvCredit += n
		s.discarded += n
		if s.discarded > maxDiscard {
			c.resetStream(s, frame.ErrCodeNo)
			return nil
		}
		if f.EndStream() {
			c.endRequest(s)
			return nil
		}
		c.grantStreamCredit(s)
		return nil
	}
	if s.received > c.cfg.MaxRequestBodySize && !s.tunnel {
		c.recvCredit += int64(len(data))
		c.bodyTooLarge(s)
		return nil
	}
	if len(data) > 0 {
		c.deliver(s, data)
	}
	if f.EndStream() {
		c.endRequest(s)
	}
	c.grantStreamCredit(s)
	return nil
}

// deliver hands body bytes to the stream: buffered for an inline route (whose
// window is released at once, the buffer being bounded by maxInlineBody) or piped
// to the worker's body reader (released as the handler reads).
func (c *Conn) deliver(s *stream, data []byte) {
	n := int64(len(data))
	if s.buffering && len(s.body)+len(data) > maxInlineBody {
		c.streamBuffered(s)
	}
	if s.buffering {
		s.body = append(s.body, data...)
		s.recvCredit += n
		c.recvCredit += n
		return
	}
	c.mu.Lock()
	if s.sh.done || s.sh.dead || s.sh.inClosed {
		c.mu.Unlock()
		s.recvCredit += n
		c.recvCredit += n
		return
	}
	s.sh.in, s.sh.inRd = appendBody(s.sh.in, s.sh.inRd, data)
	if s.sh.readWait {
		s.sh.readWait = false
		s.cond.Broadcast()
	}
	c.mu.Unlock()
}

// streamBuffered turns the buffered body of an inline route's request, about to
// grow past maxInlineBody, into a streamed one: the handler runs on a worker and
// reads what was buffered first. The window of those bytes went back as they
// arrived; it is taken back from the credit the reader's consumption will give, so
// that the unread bytes stay bounded by the windows as for any streamed body.
func (c *Conn) streamBuffered(s *stream) {
	s.buffering, s.inline = false, false
	moved := int64(len(s.body))
	s.recvCredit -= moved
	c.recvCredit -= moved
	c.mu.Lock()
	s.sh.in, s.sh.inRd = appendBody(s.sh.in, s.sh.inRd, s.body)
	c.mu.Unlock()
	s.body = s.body[:0]
	s.req.BodyReader = &s.reader
	c.dispatch(s)
}

// endRequest handles END_STREAM from the client.
func (c *Conn) endRequest(s *stream) {
	s.remoteDone = true
	// RFC 9113 §8.1.1: a body shorter than content-length is malformed.
	if s.declLen >= 0 && s.received != s.declLen {
		c.badLength(s, "body shorter than content-length")
		return
	}
	if s.buffering {
		s.buffering = false
		s.req.Body = s.body
		if len(s.body) == 0 {
			s.req.Body = nil
		}
		c.dispatch(s)
		return
	}
	c.mu.Lock()
	s.sh.inEOF = true
	if s.sh.readWait {
		s.sh.readWait = false
		s.cond.Broadcast()
	}
	c.mu.Unlock()
	c.maybeFinish(s)
}

// badLength answers a request whose body does not match its content-length
// (RFC 9113 §8.1.1) as malformed. A buffered body (inline route) never reaches
// its handler; a streamed one's reader fails with ErrContentLength (instead of
// io.EOF after a truncated body, or more bytes than declared), its unread bytes
// dropped with the stream.
//
// The 400 is claimed in the same critical section that fails the reader, so a
// handler woken by the failure finds the response taken and cannot answer first
// (its answer would leave the client a bare reset).
func (c *Conn) badLength(s *stream, reason string) {
	if s.inline {
		c.malformedRequest(s, reason)
		return
	}
	if s.closed {
		c.failBody(s, false)
		return
	}
	c.log.Debug("h2: malformed request", "remote", c.remote, "stream", s.id, "reason", reason)
	if err := c.defenses.controlFrame(c); err != nil {
		c.failBody(s, false)
		c.handleError(err)
		return
	}
	c.answerMalformed(s, c.failBody(s, true))
}

// failBody fails a streamed body's reader with ErrContentLength and, with claim,
// takes the response for the 400 in the same critical section (claimResponse),
// reporting whether it did.
func (c *Conn) failBody(s *stream, claim bool) (answer bool) {
	c.mu.Lock()
	if claim {
		answer = c.claimResponse(s)
	}
	if s.sh.inErr == nil {
		s.sh.inErr = ErrContentLength
	}
	s.cond.Broadcast()
	c.mu.Unlock()
	return answer
}

// bodyTooLarge handles a body growing past MaxRequestBodySize (see Config). A
// streamed body's reader fails with ErrBodyTooLarge, so the handler answers (413,
// through the framework's error handler); what arrives meanwhile is discarded
// without granting the stream window back, so the client stalls within one
// window, and maybeFinish asks it to stop with RST_STREAM NO_ERROR once the
// answer is complete (RFC 9113 §8.1), as for a refused buffered body. The handler
// runs to completion, so this reset does not count as an abandoned stream
// (MadeYouReset's budget).
func (c *Conn) bodyTooLarge(s *stream) {
	if s.buffering {
		s.buffering = false
		c.rejectRequest(s, 413)
		return
	}
	c.mu.Lock()
	if s.sh.inErr == nil {
		s.sh.inErr = ErrBodyTooLarge // after the bytes already delivered
		s.cond.Broadcast()
	}
	c.mu.Unlock()
}

// grantStreamCredit returns released receive window of s once half of it is
// released: the peer then still has half a window to send, so it never stalls.
func (c *Conn) grantStreamCredit(s *stream) {
	if s.closed || s.remoteDone || s.recvCredit < int64(c.cfg.InitialWindowSize)/2 {
		return
	}
	c.out = frame.AppendWindowUpdate(c.out, s.id, uint32(s.recvCredit))
	s.recvWindow += s.recvCredit
	s.recvCredit = 0
}

// grantConnCredit does the same for the connection window.
func (c *Conn) grantConnCredit() {
	if c.recvCredit < c.cfg.connWindow()/2 {
		return
	}
	c.out = frame.AppendWindowUpdate(c.out, 0, uint32(c.recvCredit))
	c.recvWindow += c.recvCredit
	c.recvCredit = 0
}
