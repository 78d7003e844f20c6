package celerish3

import (
	"context"
	"errors"

	httpmsg "github.com/celeris-dev/celeris/transport"
	"github.com/quic-go/quic-go"
)

// Errors of the response writer.
var (
	// ErrAnswered: a second response (or an interim one after the final
	// response started) was attempted on one request.
	ErrAnswered = errors.New("celerish3: response already started")
	// ErrNotStreaming: Write, Flush or End without a streamed response
	// (WriteHeader first).
	ErrNotStreaming = errors.New("celerish3: no streamed response started")
)

// copyLimit: a body up to this size is copied behind its frame headers and
// leaves in one stream write; a larger one is written from the caller's slice
// (quic-go's Write returns once the stream took it all).
const copyLimit = 16 << 10

// responseWriter is the httpmsg.ResponseWriter of a request stream. It is used by
// one goroutine at a time (the handler's), as the framework does.
type responseWriter struct {
	s   *reqStream
	enc fieldEncoder
	out []byte // frames being built

	isHead    bool
	started   bool  // the final response's header section is sent
	streaming bool  // WriteHeader or WriteHeaderLength started it
	noBody    bool  // the status or method has no content
	ended     bool  // the send side is closed or reset
	held      bool  // WriteResponse's end waits in out for finish
	length    int64 // WriteHeaderLength's, -1 otherwise
	written   int64 // body bytes written
	err       error // the first write error; later writes return it
}

var (
	_ httpmsg.ResponseWriter      = (*responseWriter)(nil)
	_ httpmsg.InformationalWriter = (*responseWriter)(nil)
	_ httpmsg.SizedWriter         = (*responseWriter)(nil)
	_ httpmsg.ContextWriter       = (*responseWriter)(nil)
)

// Context is the request's context (httpmsg.ContextWriter).
func (w *responseWriter) Context() context.Context { return w.s.ctx }

func (w *responseWriter) reset() {
	s := w.s
	if cap(w.out) > 64<<10 {
		w.out = nil
	}
	*w = responseWriter{s: s, enc: w.enc, out: w.out[:0], length: -1}
}

// send writes b to the stream; the first failure sticks.
func (w *responseWriter) send(b []byte) error {
	if w.err != nil {
		return w.err
	}
	if _, err := w.s.str.Write(b); err != nil {
		w.err = err
		return err
	}
	return nil
}

// bodyless reports the statuses without content (RFC 9110 §6.4.1).
func bodyless(status int) bool {
	return status < 200 || status == 204 || status == 304
}

// WriteResponse sends a complete response: one HEADERS frame with
// content-length, one DATA frame, the end of the stream. Its end leaves when the
// handler returned (finish), as net/http flushes its buffer then and as the core
// module's HTTP/1.1 and HTTP/2 do: what middleware does after the handler
// (saving a session, committing a transaction, logging) is done before the
// client can take the answer as complete. A body up to copyLimit waits whole,
// with its header section; of a larger one only the last heldTail bytes wait
// (the client cannot finish a response short of its content-length), the rest
// leaving at once from the caller's slice.
func (w *responseWriter) WriteResponse(status int, header []httpmsg.Field, body []byte) error {
	if w.started || w.ended {
		return ErrAnswered
	}
	w.started = true
	cl := int64(len(body))
	if status == 204 || status == 304 || status < 200 {
		cl, body = -1, nil
	}
	if w.isHead {
		body = nil
	}
	w.out = w.enc.appendHeaders(w.out[:0], status, header, true, cl)
	if len(body) > 0 {
		w.out = appendFrameHeader(w.out, frameData, uint64(len(body)))
		if len(body) <= copyLimit {
			w.out = append(w.out, body...)
		} else {
			cut := len(body) - heldTail
			err := w.send(w.out)
			if err == nil {
				err = w.send(body[:cut])
			}
			if err != nil {
				w.close()
				return err
			}
			w.out = append(w.out[:0], body[cut:]...)
		}
	}
	w.held = true
	return nil
}

// heldTail is how much of a large complete body waits for the handler's return.
const heldTail = 1 << 10

// WriteInformational sends an interim (1xx) response (RFC 9114 §4.1: any
// number of interim responses may precede the final one).
func (w *responseWriter) WriteInformational(status int, header []httpmsg.Field) error {
	if !httpmsg.ValidInformational(status) {
		return httpmsg.ErrInformational
	}
	if w.started || w.ended {
		return ErrAnswered
	}
	w.out = w.enc.appendHeaders(w.out[:0], status, header, false, -1)
	return w.send(w.out)
}

// WriteHeader starts a streamed response of unknown length: DATA frames follow
// as the handler writes, the end of the stream ends it.
func (w *responseWriter) WriteHeader(status int, header []httpmsg.Field) error {
	return w.writeHeader(status, header, -1)
}

// WriteHeaderLength starts a streamed response of length bytes, announced with
// content-length (httpmsg.SizedWriter).
func (w *responseWriter) WriteHeaderLength(status int, header []httpmsg.Field, length int64) error {
	return w.writeHeader(status, header, length)
}

func (w *responseWriter) writeHeader(status int, header []httpmsg.Field, length int64) error {
	if w.started || w.ended {
		return ErrAnswered
	}
	w.started, w.streaming, w.length = true, true, length
	w.noBody = w.isHead || bodyless(status)
	if bodyless(status) {
		length = -1
	}
	w.out = w.enc.appendHeaders(w.out[:0], status, header, true, length)
	return w.send(w.out)
}

// Write sends p as one DATA frame. It blocks while the client's flow-control
// window is closed, so a slow reader holds the handler back instead of growing
// a buffer.
func (w *responseWriter) Write(p []byte) (int, error) {
	if !w.streaming || w.ended {
		return 0, ErrNotStreaming
	}
	if w.length >= 0 && w.written+int64(len(p)) > w.length {
		return 0, httpmsg.ErrLength
	}
	w.written += int64(len(p))
	if w.noBody || len(p) == 0 {
		return len(p), w.err
	}
	w.out = appendFrameHeader(w.out[:0], frameData, uint64(len(p)))
	if len(p) <= copyLimit {
		w.out = append(w.out, p...)
		if err := w.send(w.out); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	if err := w.send(w.out); err != nil {
		return 0, err
	}
	if err := w.send(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush does nothing: a stream write is handed to QUIC at once, which sends it
// as soon as congestion and flow control allow.
func (w *responseWriter) Flush() error {
	if !w.streaming {
		return ErrNotStreaming
	}
	return w.err
}

// End finishes a streamed response with the trailer section (RFC 9114 §4.1: a
// HEADERS frame after the DATA frames), then the end of the stream. A response
// of declared length that is short is reset instead (H3_INTERNAL_ERROR): the
// client must not take it as complete.
func (w *responseWriter) End(trailer []httpmsg.Field) error {
	if !w.streaming {
		return ErrNotStreaming
	}
	if w.ended {
		return w.err
	}
	if w.length >= 0 && w.written != w.length && !w.noBody {
		w.cancel(ErrCodeInternal)
		return httpmsg.ErrLength
	}
	var err error
	if len(trailer) > 0 && w.length < 0 && !w.noBody {
		w.out = w.enc.appendHeaders(w.out[:0], 0, trailer, false, -1)
		err = w.send(w.out)
	}
	w.close()
	return err
}

// refuse answers a request the server refuses before any handler runs.
func (w *responseWriter) refuse(status int) {
	body := s2b(refusalText(status))
	_ = w.WriteResponse(status, []httpmsg.Field{{Name: "Content-Type", Value: "text/plain; charset=utf-8"}}, body)
}

func refusalText(status int) string {
	switch status {
	case 413:
		return "Request Entity Too Large"
	case 431:
		return "Request Header Fields Too Large"
	}
	return "Bad Request"
}

// close ends the send side cleanly (FIN).
func (w *responseWriter) close() {
	if w.ended {
		return
	}
	w.ended = true
	if w.err != nil {
		w.s.str.CancelWrite(quic.StreamErrorCode(ErrCodeInternal))
		return
	}
	_ = w.s.str.Close()
}

// cancel resets the send side with code (RESET_STREAM).
func (w *responseWriter) cancel(code ErrCode) {
	if w.ended {
		return
	}
	w.ended = true
	w.s.str.CancelWrite(quic.StreamErrorCode(code))
}

// finish runs after the handler: a complete response sends what it held and
// ends the stream, a response never started gets 500, an open streamed one is
// reset (the framework ends its streams itself; this covers a handler that
// panicked past it).
func (w *responseWriter) finish() {
	if !w.started && !w.ended {
		_ = w.WriteResponse(500, nil, nil)
	}
	switch {
	case w.ended:
	case w.held:
		w.held = false
		_ = w.send(w.out)
		w.close()
	default:
		w.cancel(ErrCodeInternal)
	}
}
