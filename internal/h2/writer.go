package h2

import (
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// The stream is the httpmsg.ResponseWriter of its request. On an inline route its
// methods run on the loop and write frames directly; on a worker they queue the
// response on the stream's shared part and wake the loop, which frames it (see
// pumpLocked). Field strings and byte slices are copied before the call returns.
// A handler running in place (direct.go) writes as an inline one does, holding
// the run's lock (place), until it leaves the run or the loop ends it.
//
// The shared part of an inline stream is never shared: its handler runs on the
// loop, its body is buffered (no bodyReader) and it never enters the ready list,
// so only the loop touches s.sh and the inline paths below do so without c.mu.
// (Context, which another goroutine may call while the handler runs, reads only
// sh.dead and sh.done, which the loop writes under c.mu while the stream is in use;
// maybeRecycle resets them without it, after Serve returned, when Context may no
// longer be called.)

// WriteResponse sends a complete response. It implements httpmsg.ResponseWriter.
// On a worker the body is copied whole (it is already in memory; only streamed
// Writes are subject to backpressure) and the response is framed when Serve
// returned, as an inline one is, as HTTP/1.1 hands a batch over and as net/http
// flushes its buffer: what the handler's middleware does after it (saving a
// session, committing a transaction, logging) is done before the client sees
// the answer end.
func (s *stream) WriteResponse(status int, header []httpmsg.Field, body []byte) error {
	c := s.c
	if s.inline {
		return s.writeResponseInline(status, header, body)
	}
	if s.place() {
		err := s.writeResponseInline(status, header, body)
		c.d.unplace()
		return err
	}
	c.mu.Lock()
	if err := s.startLocked(status, header); err != nil {
		c.mu.Unlock()
		return err
	}
	s.sh.length = int64(len(body))
	s.sh.ended = true
	s.sh.whole = true // Run's return notifies the loop
	if !s.isHead && !bodyless(status) {
		s.sh.data = append(s.sh.data, body...)
	}
	c.mu.Unlock()
	return nil
}

// writeResponseInline is WriteResponse on the loop (inline, or in place with
// c.mu held).
func (s *stream) writeResponseInline(status int, header []httpmsg.Field, body []byte) error {
	if err := s.startInline(status); err != nil {
		return err
	}
	s.noBody = s.isHead || bodyless(status)
	length := int64(len(body)) // a HEAD response announces the GET length
	if s.noBody {
		body = nil
	}
	s.sh.ended = true
	s.c.writeHeaders(s, status, header, length, len(body) == 0)
	if len(body) > 0 {
		s.inlineData(body, true)
	}
	return nil
}

// WriteHeader starts a streamed response. It implements httpmsg.ResponseWriter.
func (s *stream) WriteHeader(status int, header []httpmsg.Field) error {
	c := s.c
	if s.inline {
		return s.writeHeaderInline(status, header)
	}
	if s.place() {
		err := s.writeHeaderInline(status, header)
		c.d.unplace()
		return err
	}
	c.mu.Lock()
	err := s.startLocked(status, header)
	c.mu.Unlock()
	return err
}

// writeHeaderInline is WriteHeader on the loop (inline, or in place with c.mu
// held).
func (s *stream) writeHeaderInline(status int, header []httpmsg.Field) error {
	if err := s.startInline(status); err != nil {
		return err
	}
	s.noBody = s.isHead || bodyless(status)
	s.c.writeHeaders(s, status, header, -1, false)
	return nil
}

// Write queues body bytes of a streamed response; on a worker it blocks while
// more than maxQueued bytes of the stream are unsent. It implements
// httpmsg.ResponseWriter.
func (s *stream) Write(p []byte) (int, error) {
	c := s.c
	if s.inline {
		return s.writeInline(p)
	}
	if s.place() {
		if len(s.sh.data)-s.sh.rd+len(p) <= maxQueued && len(c.out)+len(p) <= maxQueued {
			n, err := s.writeInline(p)
			c.d.unplace()
			return n, err
		}
		// The output waits for the client: wait as a worker.
		c.leave(s)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.sh.status == 0 {
		if err := s.startLocked(200, nil); err != nil {
			return 0, err
		}
	}
	p, lenErr := s.trimSized(p)
	written := 0
	for written < len(p) {
		for !s.sh.dead && len(s.sh.data)-s.sh.rd >= maxQueued {
			s.sh.blocked = true
			if c.notifyLocked(s) {
				c.mu.Unlock()
				c.nc.Wake()
				c.mu.Lock()
				continue
			}
			s.cond.Wait()
		}
		if s.sh.dead || s.sh.ended {
			return written, ErrStreamClosed
		}
		n := min(len(p)-written, maxQueued-(len(s.sh.data)-s.sh.rd))
		s.sh.data = append(s.sh.data, p[written:written+n]...)
		written += n
		if len(s.sh.data)-s.sh.rd >= wakeQueued && c.notifyLocked(s) {
			c.mu.Unlock()
			c.nc.Wake()
			c.mu.Lock()
		}
	}
	return written, lenErr
}

// writeInline is Write on the loop (inline, or in place with c.mu held).
func (s *stream) writeInline(p []byte) (int, error) {
	if s.sh.status == 0 {
		if err := s.writeHeaderInline(200, nil); err != nil {
			return 0, err
		}
	}
	if s.closed || s.sh.ended {
		return 0, ErrStreamClosed
	}
	p, err := s.trimSized(p)
	if !s.noBody {
		s.inlineData(p, false)
	}
	return len(p), err
}

// Flush sends what was written so far. It implements httpmsg.ResponseWriter.
// A handler in place leaves its run: what it wrote goes out with the loop's
// next pass, and the rest of its response follows as a worker's.
func (s *stream) Flush() error {
	c := s.c
	if s.inline {
		if s.sh.status == 0 {
			return s.writeHeaderInline(200, nil)
		}
		return nil
	}
	if s.place() {
		if s.sh.status == 0 {
			if err := s.writeHeaderInline(200, nil); err != nil {
				c.d.unplace()
				return err
			}
		}
		c.leave(s)
	}
	c.mu.Lock()
	if s.sh.status == 0 {
		if err := s.startLocked(200, nil); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	if s.sh.dead {
		c.mu.Unlock()
		return ErrStreamClosed
	}
	wake := c.notifyLocked(s)
	c.mu.Unlock()
	if wake {
		c.nc.Wake()
	}
	return nil
}

// End finishes a streamed response with optional trailers. It implements
// httpmsg.ResponseWriter.
func (s *stream) End(trailer []httpmsg.Field) error {
	c := s.c
	if s.inline {
		return s.endInline(trailer)
	}
	if s.place() {
		err := s.endInline(trailer)
		c.d.unplace()
		return err
	}
	c.mu.Lock()
	if s.sh.status == 0 {
		if err := s.startLocked(200, nil); err != nil {
			c.mu.Unlock()
			return err
		}
	}
	if s.sh.dead || s.sh.ended {
		c.mu.Unlock()
		return ErrStreamClosed
	}
	if s.shortSized() {
		c.mu.Unlock()
		return httpmsg.ErrLength // left unended: reset when the handler returns
	}
	s.sh.ended = true
	if len(trailer) > 0 {
		s.sh.trailer.add(trailer)
		s.sh.hasTrl = true
	}
	wake := c.notifyLocked(s)
	c.mu.Unlock()
	if wake {
		c.nc.Wake()
	}
	return nil
}

// endInline is End on the loop (inline, or in place with c.mu held).
func (s *stream) endInline(trailer []httpmsg.Field) error {
	if s.sh.status == 0 {
		if err := s.writeHeaderInline(200, nil); err != nil {
			return err
		}
	}
	if s.closed || s.sh.ended {
		return ErrStreamClosed
	}
	if s.shortSized() {
		return httpmsg.ErrLength // left unended: reset when the handler returns
	}
	s.sh.ended = true
	if len(trailer) > 0 {
		s.sh.trailer.add(trailer)
		s.sh.hasTrl = true
	}
	s.c.pumpLocked(s)
	return nil
}

// OnLoop reports whether the stream's handler runs on the event loop (an
// inline route), where its output is queued whole (httpmsg.LoopWriter).
func (s *stream) OnLoop() bool { return s.inline }

// Abort breaks a streamed response off (httpmsg.Aborter). A stream whose
// response is left unended is reset with INTERNAL_ERROR once its handler
// returns (handlerReturned, RFC 9113 §8.1), and its queued DATA dropped, so
// Abort only promises that End will not be called.
func (s *stream) Abort() {}

// startInline begins an inline response (on the loop).
func (s *stream) startInline(status int) error {
	if s.sh.status != 0 {
		return ErrAnswered
	}
	if s.closed {
		return ErrStreamClosed
	}
	s.sh.status = status
	return nil
}

// inlineData sends body bytes from the loop: directly while nothing is queued
// and the windows allow, the rest copied to the stream's queue.
func (s *stream) inlineData(p []byte, end bool) {
	c := s.c
	if len(s.sh.data) == s.sh.rd && !s.localDone && (s.inPlace || !c.holdData()) {
		n := c.sendData(s, p, end)
		p = p[n:]
	}
	if len(p) > 0 {
		s.sh.data = append(s.sh.data, p...)
		c.enqueueSend(s)
	}
}

// startLocked begins a worker response: status and copied fields wait for the
// loop. c.mu is held.
func (s *stream) startLocked(status int, header []httpmsg.Field) error {
	if s.sh.dead {
		return ErrStreamClosed
	}
	if s.sh.status != 0 {
		return ErrAnswered
	}
	s.sh.status = status
	s.sh.hdr.add(header)
	s.sh.hdrReady = true
	return nil
}

// notifyLocked puts s on the ready list. It reports whether the caller must wake
// the loop: only when the list was empty, so wake-ups coalesce. c.mu is held.
func (c *Conn) notifyLocked(s *stream) bool {
	if c.closed || s.sh.inReady {
		return false
	}
	s.sh.inReady = true
	c.ready = append(c.ready, s)
	return len(c.ready) == 1
}
