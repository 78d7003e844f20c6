// Package h1client is the load generator's HTTP/1.1 client: raw keep-alive
// TCP connections, request bytes written by hand (optionally pipelined) and a
// minimal response parser that understands the status line, Content-Length,
// chunked transfer coding and Connection: close, and nothing else.
//
// The parser is split the way the server's is: ParseHead and ChunkedDecoder
// are pure and incremental over []byte (they answer ErrNeedMore), and Reader
// owns the buffer and the socket reads around them.
package h1client

import (
	"bytes"
	"errors"
)

// Errors returned by the parser and the connection.
var (
	// ErrNeedMore means the buffer holds an incomplete element; read more
	// bytes and call again with the same (grown) buffer.
	ErrNeedMore = errors.New("h1client: need more data")
	// ErrMalformed means the server sent bytes that are not an HTTP/1.1 response.
	ErrMalformed = errors.New("h1client: malformed response")
	// ErrHeadTooLarge means the status line and headers do not fit the read buffer.
	ErrHeadTooLarge = errors.New("h1client: response head too large")
	// ErrServerClosed means the server closed the connection before the
	// next response began; the request in flight is lost.
	ErrServerClosed = errors.New("h1client: server closed the connection")
	// ErrCloseAfterResponse means a complete response carried
	// "Connection: close" (or ran to EOF); the caller dials again.
	ErrCloseAfterResponse = errors.New("h1client: server closes the connection after this response")
)

// Head is what the parser keeps from a status line and header block.
type Head struct {
	Status int
	// ContentLength is -1 when the header is absent.
	ContentLength int64
	Chunked       bool
	// Close is set by "Connection: close" (RFC 9112 §9.6).
	Close bool
}

// NoBody reports whether the response has no body whatever its headers say
// (RFC 9112 §6.3 rule 1: 1xx, 204 and 304).
func (h *Head) NoBody() bool {
	return h.Status < 200 || h.Status == 204 || h.Status == 304
}

var crlfcrlf = []byte("\r\n\r\n")

// ParseHead parses the status line and header block at the start of buf and
// returns the bytes consumed, through the empty line. It returns ErrNeedMore
// until the empty line is in buf. h is overwritten.
func ParseHead(buf []byte, h *Head) (n int, err error) {
	end := bytes.Index(buf, crlfcrlf)
	if end < 0 {
		return 0, ErrNeedMore
	}
	*h = Head{ContentLength: -1}
	// Status line: "HTTP/1.x SSS reason" (RFC 9112 §4).
	line, rest := cutLine(buf[:end+2])
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[8] != ' ' {
		return 0, ErrMalformed
	}
	st := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, ErrMalformed
		}
		st = st*10 + int(c-'0')
	}
	if len(line) > 12 && line[12] != ' ' {
		return 0, ErrMalformed
	}
	h.Status = st
	for len(rest) > 0 {
		line, rest = cutLine(rest)
		colon := bytes.IndexByte(line, ':')
		if colon <= 0 {
			return 0, ErrMalformed
		}
		name, value := line[:colon], trimOWS(line[colon+1:])
		switch {
		case equalFold(name, "content-length"):
			cl, ok := parseUint(value)
			if !ok || (h.ContentLength >= 0 && h.ContentLength != cl) {
				return 0, ErrMalformed
			}
			h.ContentLength = cl
		case equalFold(name, "transfer-encoding"):
			// The server may only send chunked as the final coding (RFC 9112 §6.1).
			h.Chunked = hasToken(value, "chunked")
		case equalFold(name, "connection"):
			h.Close = h.Close || hasToken(value, "close")
		}
	}
	if h.Chunked {
		// RFC 9112 §6.3 rule 3: Transfer-Encoding overrides Content-Length.
		h.ContentLength = -1
	}
	return end + 4, nil
}

// cutLine splits b at the first CRLF; b must end with CRLF.
func cutLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil
	}
	line = b[:i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, b[i+1:]
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// equalFold compares an ASCII header name with a lower-case literal.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether a comma-separated header value holds tok.
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		i := bytes.IndexByte(v, ',')
		var item []byte
		if i < 0 {
			item, v = v, nil
		} else {
			item, v = v[:i], v[i+1:]
		}
		if equalFold(trimOWS(item), tok) {
			return true
		}
	}
	return false
}

func parseUint(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// Chunked decoder states.
const (
	chunkSize    = iota // expecting "hex[;ext]\r\n"
	chunkData           // inside chunk data
	chunkDataEnd        // expecting the CRLF after chunk data
	chunkTrailer        // after the last chunk: trailer lines until an empty one
	chunkDone
)

// ChunkedDecoder consumes a chunked body (RFC 9112 §7.1) incrementally.
// The zero value is ready for a new body.
type ChunkedDecoder struct {
	state     int
	remaining int64 // bytes left in the current chunk
}

// Reset prepares d for a new body.
func (d *ChunkedDecoder) Reset() { *d = ChunkedDecoder{} }

// Feed consumes as much of buf as it can. It returns the bytes consumed and
// the chunk-data bytes among them, via data: data(buf[i:j]) is called for each
// run of body bytes (data may be nil), valid only during the call.
// done is true once the last chunk and trailers are consumed; a partial line
// at the end of buf is left unconsumed for the next call.
func (d *ChunkedDecoder) Feed(buf []byte, data func([]byte)) (n int, done bool, err error) {
	for n < len(buf) || d.state == chunkDone {
		switch d.state {
		case chunkSize:
			i := bytes.IndexByte(buf[n:], '\n')
			if i < 0 {
				if len(buf)-n > 1024 {
					return n, false, ErrMalformed
				}
				return n, false, nil
			}
			line := buf[n : n+i]
			n += i + 1
			size, ok := parseChunkSize(line)
			if !ok {
				return n, false, ErrMalformed
			}
			if size == 0 {
				d.state = chunkTrailer
			} else {
				d.remaining, d.state = size, chunkData
			}
		case chunkData:
			k := int64(len(buf) - n)
			if k > d.remaining {
				k = d.remaining
			}
			if data != nil {
				data(buf[n : n+int(k)])
			}
			n += int(k)
			d.remaining -= k
			if d.remaining == 0 {
				d.state = chunkDataEnd
			}
		case chunkDataEnd:
			if len(buf)-n < 2 {
				return n, false, nil
			}
			if buf[n] != '\r' || buf[n+1] != '\n' {
				return n, false, ErrMalformed
			}
			n += 2
			d.state = chunkSize
		case chunkTrailer:
			i := bytes.IndexByte(buf[n:], '\n')
			if i < 0 {
				return n, false, nil
			}
			empty := i == 0 || (i == 1 && buf[n] == '\r')
			n += i + 1
			if empty {
				d.state = chunkDone
			}
		case chunkDone:
			return n, true, nil
		}
	}
	return n, false, nil
}

// parseChunkSize parses "hex[;ext][\r]" (the LF already cut).
func parseChunkSize(line []byte) (int64, bool) {
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	line = trimOWS(line)
	if len(line) == 0 || len(line) > 15 {
		return 0, false
	}
	var n int64
	for _, c := range line {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		n = n<<4 | int64(v)
	}
	return n, true
}
