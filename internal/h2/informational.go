package h2

import (
	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// interimHead is an informational (1xx) response a worker handler queued for
// the loop, ahead of the final HEADERS.
type interimHead struct {
	status int
	fields fieldBuf
}

// WriteInformational sends an interim response as HEADERS without END_STREAM
// (RFC 9113 §8.1: a response may start with any number of 1xx header blocks). It
// implements httpmsg.InformationalWriter.
func (s *stream) WriteInformational(status int, header []httpmsg.Field) error {
	if !httpmsg.ValidInformational(status) {
		return httpmsg.ErrInformational
	}
	c := s.c
	if s.inline {
		return s.interimInline(status, header)
	}
	if s.place() {
		err := s.interimInline(status, header)
		c.d.unplace()
		return err
	}
	c.mu.Lock()
	if s.sh.dead {
		c.mu.Unlock()
		return ErrStreamClosed
	}
	if s.sh.status != 0 {
		c.mu.Unlock()
		return ErrAnswered
	}
	h := interimHead{status: status}
	h.fields.add(header)
	s.sh.interim = append(s.sh.interim, h)
	wake := c.notifyLocked(s)
	c.mu.Unlock()
	if wake {
		c.nc.Wake()
	}
	return nil
}

// interimInline is WriteInformational on the loop (inline, or in place with c.mu
// held).
func (s *stream) interimInline(status int, header []httpmsg.Field) error {
	if s.sh.status != 0 {
		return ErrAnswered
	}
	if s.closed {
		return ErrStreamClosed
	}
	s.c.writeInterim(s, status, header)
	return nil
}

// writeInterims sends the interim responses a worker queued (c.mu held).
func (c *Conn) writeInterims(s *stream) {
	for i := range s.sh.interim {
		h := &s.sh.interim[i]
		if !s.hdrSent && !s.localDone {
			c.writeInterim(s, h.status, h.fields.fields)
		}
		*h = interimHead{}
	}
	s.sh.interim = s.sh.interim[:0]
}

// writeInterim encodes an interim head and writes it as HEADERS (+CONTINUATION)
// without END_STREAM. Connection-specific and framing fields are dropped as in
// writeHeaders; no date is added.
func (c *Conn) writeInterim(s *stream, status int, fields []httpmsg.Field) {
	c.hw.b = c.hw.b[:0]
	c.encode(":status", statusString(status), false)
	for _, f := range fields {
		if !httpfield.ValidResponseField(f.Name, f.Value) || httpfield.ConnectionSpecific(f.Name) {
			continue
		}
		name := c.lowerName(f.Name)
		switch name {
		case "te", "date", "content-length":
			continue
		}
		c.encode(name, f.Value, true)
	}
	c.writeBlock(s.id, c.hw.b, false)
}

// Close ends the handler's use of the request body (net/http's Body.Close): a
// pending and every later Read fail with ErrBodyClosed, and body bytes that
// arrive from then on are dropped, their window given back at once.
func (r *bodyReader) Close() error {
	s := r.s
	c := s.c
	c.mu.Lock()
	if s.sh.inClosed || s.sh.done {
		c.mu.Unlock()
		return nil
	}
	s.sh.inClosed = true
	s.sh.consumed += int64(len(s.sh.in) - s.sh.inRd)
	s.sh.in, s.sh.inRd = s.sh.in[:0], 0
	if s.sh.inErr == nil && !s.sh.inEOF {
		s.sh.inErr = ErrBodyClosed
	}
	s.cond.Broadcast()
	wake := s.sh.consumed > 0 && c.notifyLocked(s)
	c.mu.Unlock()
	if wake {
		c.nc.Wake()
	}
	return nil
}
