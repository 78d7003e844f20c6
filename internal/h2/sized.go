package h2

import "github.com/celeris-dev/celeris/internal/httpmsg"

// WriteHeaderLength starts a streamed response of known length: the HEADERS
// carry content-length (httpmsg.SizedWriter). Write past length fails with
// httpmsg.ErrLength; End short of it fails too and leaves the response unended,
// so the stream is reset (INTERNAL_ERROR) when the handler returns instead of
// ending a body shorter than its content-length (RFC 9113 §8.1.1).
func (s *stream) WriteHeaderLength(status int, header []httpmsg.Field, length int64) error {
	if length < 0 {
		return s.WriteHeader(status, header)
	}
	c := s.c
	sized := !s.isHead && !bodyless(status)
	if s.inline {
		return s.sizedInline(status, header, length, sized)
	}
	if s.place() {
		err := s.sizedInline(status, header, length, sized)
		c.d.unplace()
		return err
	}
	c.mu.Lock()
	err := s.startLocked(status, header)
	if err == nil {
		s.sh.length = length
		s.sh.sized, s.sh.owed = sized, length
	}
	c.mu.Unlock()
	return err
}

// sizedInline is WriteHeaderLength on the loop (inline, or in place with c.mu
// held).
func (s *stream) sizedInline(status int, header []httpmsg.Field, length int64, sized bool) error {
	if err := s.startInline(status); err != nil {
		return err
	}
	s.noBody = s.isHead || bodyless(status)
	s.sh.sized, s.sh.owed = sized, length
	s.c.writeHeaders(s, status, header, length, false)
	return nil
}

// trimSized cuts p to what a sized response still owes (s.sh is the caller's:
// inline, or c.mu held).
func (s *stream) trimSized(p []byte) ([]byte, error) {
	if !s.sh.sized {
		return p, nil
	}
	var err error
	if int64(len(p)) > s.sh.owed {
		p, err = p[:s.sh.owed], httpmsg.ErrLength
	}
	s.sh.owed -= int64(len(p))
	return p, err
}

// shortSized reports a sized response ended before its length (End's check).
func (s *stream) shortSized() bool { return s.sh.sized && s.sh.owed != 0 }
