package h1client

import (
	"errors"
	"io"
)

// Response is what Reader.ReadResponse reports for one response.
type Response struct {
	Status  int
	BodyLen int64
	// Close reports that the server will close the connection after it.
	Close bool
	// Body holds the body bytes when the Reader captures them; it is valid
	// until the next ReadResponse.
	Body []byte
}

// Reader reads responses from a connection into one reused buffer and
// discards their bodies (or captures them, for answer checks).
// It is owned by the goroutine that owns the connection.
type Reader struct {
	rd      io.Reader
	buf     []byte
	r, w    int // unread bytes are buf[r:w]
	capture bool
	head    Head
	chunk   ChunkedDecoder
}

// NewReader returns a Reader with a size-byte buffer; the buffer bounds the
// response head. capture keeps body bytes in Response.Body.
func NewReader(rd io.Reader, size int, capture bool) *Reader {
	return &Reader{rd: rd, buf: make([]byte, size), capture: capture}
}

// Buffered returns the number of unread bytes in the buffer.
func (r *Reader) Buffered() int { return r.w - r.r }

// fill reads at least one more byte into the buffer, compacting first.
func (r *Reader) fill() error {
	if r.r > 0 {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	if r.w == len(r.buf) {
		return ErrHeadTooLarge
	}
	for {
		n, err := r.rd.Read(r.buf[r.w:])
		r.w += n
		if n > 0 {
			return nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
	}
}

// ReadResponse reads one final response (skipping 1xx ones) and its body.
// A clean EOF before any byte of the response returns ErrServerClosed.
func (r *Reader) ReadResponse(resp *Response) error {
	*resp = Response{Body: resp.Body[:0]}
	for {
		n, err := ParseHead(r.buf[r.r:r.w], &r.head)
		if err == ErrNeedMore {
			start := r.w - r.r
			if ferr := r.fill(); ferr != nil {
				if ferr == io.ErrUnexpectedEOF && start == 0 {
					return ErrServerClosed
				}
				return ferr
			}
			continue
		}
		if err != nil {
			return err
		}
		r.r += n
		if r.head.Status >= 100 && r.head.Status < 200 {
			continue // interim response (RFC 9110 §15.2)
		}
		break
	}
	resp.Status = r.head.Status
	resp.Close = r.head.Close
	switch {
	case r.head.NoBody():
	case r.head.Chunked:
		if err := r.readChunked(resp); err != nil {
			return err
		}
	case r.head.ContentLength >= 0:
		if err := r.readLength(resp, r.head.ContentLength); err != nil {
			return err
		}
	default:
		// RFC 9112 §6.3 rule 8: the body runs to the end of the connection.
		if err := r.readToEOF(resp); err != nil {
			return err
		}
		resp.Close = true
	}
	return nil
}

func (r *Reader) take(resp *Response, b []byte) {
	resp.BodyLen += int64(len(b))
	if r.capture {
		resp.Body = append(resp.Body, b...)
	}
}

func (r *Reader) readLength(resp *Response, remaining int64) error {
	for {
		k := int64(r.w - r.r)
		if k > remaining {
			k = remaining
		}
		r.take(resp, r.buf[r.r:r.r+int(k)])
		r.r += int(k)
		remaining -= k
		if remaining == 0 {
			return nil
		}
		r.r, r.w = 0, 0 // everything buffered was body: reuse the whole buffer
		if err := r.fill(); err != nil {
			return err
		}
	}
}

func (r *Reader) readChunked(resp *Response) error {
	r.chunk.Reset()
	sink := func(b []byte) { r.take(resp, b) }
	for {
		n, done, err := r.chunk.Feed(r.buf[r.r:r.w], sink)
		r.r += n
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if err := r.fill(); err != nil {
			return err
		}
	}
}

func (r *Reader) readToEOF(resp *Response) error {
	for {
		r.take(resp, r.buf[r.r:r.w])
		r.r, r.w = 0, 0
		if err := r.fill(); err != nil {
			if err == io.ErrUnexpectedEOF {
				return nil
			}
			return err
		}
	}
}
