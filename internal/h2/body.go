package h2

import (
	"io"
	"sync"
)

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

// maxInlineBody is the largest body an inline route's request is buffered with
// (the window is given back as it arrives). A larger body streams to the handler,
// which then runs on a worker: from the start when its content-length says so, or
// once it grew past this (streamBuffered). Buffered, it could hold up to
// MaxRequestBodySize per stream.
const maxInlineBody = 64 << 10

// appendBody appends data to a stream's unread body bytes in[rd:] (c.mu held) and
// returns the new buffer and read offset. The stream's receive window bounds the
// unread bytes (the credit goes back only as the handler reads), so the read bytes
// in front are moved out of the way rather than the buffer grown: growing it with
// them, as a plain append does while the handler never quite catches up, kept a
// fast upload's buffer growing to many windows. A buffer that must grow is taken
// from bodyBufs when one there is large enough: recycled streams leave their large
// buffers there, so that upload after upload allocates nothing.
func appendBody(in []byte, rd int, data []byte) ([]byte, int) {
	if rd > 0 && (rd == len(in) || cap(in)-len(in) < len(data)) {
		k := copy(in, in[rd:])
		in, rd = in[:k], 0
	}
	if need := len(in) + len(data); need > cap(in) {
		if b := getBodyBuf(need); b != nil {
			in = append(b, in...)
		}
	}
	return append(in, data...), rd
}

// keptBodyBuf is the largest body buffer a recycled stream keeps for itself;
// larger ones go to bodyBufs.
const keptBodyBuf = 64 << 10

// bodyBufs keeps the large body buffers of recycled streams (a window's worth
// after an upload faster than its handler) for the next streams that need one, up
// to maxPooledBodyBytes in all. A sync.Pool would lose them at every garbage
// collection, and growing a buffer again is the garbage that brings the next one.
var bodyBufs struct {
	sync.Mutex
	free  [][]byte
	bytes int
}

const maxPooledBodyBytes = 8 << 20

// getBodyBuf returns an empty pooled buffer of at least need bytes, or nil.
func getBodyBuf(need int) []byte {
	bodyBufs.Lock()
	defer bodyBufs.Unlock()
	n := len(bodyBufs.free)
	if n == 0 || cap(bodyBufs.free[n-1]) < need {
		return nil
	}
	b := bodyBufs.free[n-1]
	bodyBufs.free[n-1] = nil
	bodyBufs.free = bodyBufs.free[:n-1]
	bodyBufs.bytes -= cap(b)
	return b
}

// putBodyBuf pools the body buffer of a recycled stream, which nothing reads any
// more (loop), when it is larger than a stream keeps and the pool has room.
func putBodyBuf(b []byte) {
	if cap(b) <= keptBodyBuf {
		return
	}
	bodyBufs.Lock()
	if bodyBufs.bytes+cap(b) <= maxPooledBodyBytes {
		bodyBufs.free = append(bodyBufs.free, b[:0])
		bodyBufs.bytes += cap(b)
	}
	bodyBufs.Unlock()
}
