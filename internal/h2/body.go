package h2

import "io"

// bodyReader is the BodyReader of a request served on a worker: it drains the
// bytes the loop appends to the stream's shared part as DATA arrives, and reports
// what it consumed so the loop can grant the window back (WINDOW_UPDATE).
type bodyReader struct{ s *stream }

// creditChunk is how many consumed bytes make the reader wake the loop to return
// window; less is reported when the reader runs dry.
const creditChunk = 32 << 10

// Read implements io.Reader. It returns io.EOF after END_STREAM, by which time
// req.Trailer holds the trailers; ErrStreamClosed once the stream was reset;
// ErrBodyTooLarge past Config.MaxRequestBodySize.
func (r *bodyReader) Read(p []byte) (int, error) {
	s := r.s
	c := s.c
	c.mu.Lock()
	for len(s.sh.in) == s.sh.inRd && !s.sh.inEOF && s.sh.inErr == nil && !s.sh.inClosed {
		wake := false
		if s.sh.consumed > 0 {
			wake = c.notifyLocked(s)
		}
		s.sh.readWait = true
		if wake {
			c.mu.Unlock()
			c.nc.Wake()
			c.mu.Lock()
			continue
		}
		s.cond.Wait()
	}
	if avail := len(s.sh.in) - s.sh.inRd; avail > 0 && len(p) > 0 {
		n := copy(p, s.sh.in[s.sh.inRd:])
		s.sh.inRd += n
		if s.sh.inRd == len(s.sh.in) {
			s.sh.in, s.sh.inRd = s.sh.in[:0], 0
		}
		s.sh.consumed += int64(n)
		wake := s.sh.consumed >= creditChunk && c.notifyLocked(s)
		c.mu.Unlock()
		if wake {
			c.nc.Wake()
		}
		return n, nil
	}
	err := s.sh.inErr
	if s.sh.inClosed {
		err = ErrBodyClosed
	} else if err == nil && s.sh.inEOF {
		err = io.EOF
	}
	c.mu.Unlock()
	if err == nil { // len(p) == 0
		return 0, nil
	}
	return 0, err
}
