package celeris

import (
	"strconv"
	"strings"
)

// SSEWriter writes Server-Sent Events (text/event-stream, WHATWG HTML §9.2). It is
// valid until the handler returns.
type SSEWriter struct {
	w   *StreamWriter
	buf []byte
}

// Event is one server-sent event. Empty fields are omitted.
type Event struct {
	ID    string
	Event string
	Data  string // may hold several lines, ended by CRLF, LF or CR (each one data field)
	Retry int    // reconnection time in milliseconds; 0: omitted
}

// SSE starts a Server-Sent Events stream: status 200, Content-Type
// text/event-stream, Cache-Control no-cache. Send events with Send; each is
// flushed at once. The stream ends when the handler returns; stop early when
// c.Context() is done (the client went away).
func (c *Context) SSE() (*SSEWriter, error) {
	c.SetHeader("Cache-Control", "no-cache")
	w, err := c.Stream(200, "text/event-stream")
	if err != nil {
		return nil, err
	}
	return &SSEWriter{w: w}, nil
}

// Send writes one event and flushes it.
func (s *SSEWriter) Send(e Event) error {
	b := s.buf[:0]
	if e.ID != "" {
		b = appendField(b, "id", e.ID)
	}
	if e.Event != "" {
		b = appendField(b, "event", e.Event)
	}
	if e.Retry > 0 {
		b = append(b, "retry: "...)
		b = strconv.AppendInt(b, int64(e.Retry), 10)
		b = append(b, '\n')
	}
	// WHATWG HTML §9.2.5: a line ends at CRLF, a lone LF or a lone CR; each line
	// of Data becomes one "data:" field, which the client joins with LF.
	data := e.Data
	for {
		i := strings.IndexAny(data, "\r\n")
		if i < 0 {
			b = appendField(b, "data", data)
			break
		}
		b = appendField(b, "data", data[:i])
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
	b = append(b, '\n')
	s.buf = b
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.w.Flush()
}

// Comment writes a comment line (a keep-alive for proxies) and flushes it.
func (s *SSEWriter) Comment(text string) error {
	text = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ").Replace(text)
	s.buf = append(append(append(s.buf[:0], ": "...), text...), "\n\n"...)
	if _, err := s.w.Write(s.buf); err != nil {
		return err
	}
	return s.w.Flush()
}

// appendField appends "name: value\n"; CR and LF in value are dropped (they would
// end the field).
func appendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	for i := 0; i < len(value); i++ {
		if c := value[i]; c != '\r' && c != '\n' {
			b = append(b, c)
		}
	}
	return append(b, '\n')
}
