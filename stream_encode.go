package celeris

// Stream encoding: a content coding applied to a streamed response as it is
// written.
//
// Middleware that encodes responses (compression) captures whole ones
// (CaptureResponse); a streamed one (Stream, SSE, a net/http handler through
// Adapt that flushes) is not captured, so it sets a StreamEncoding with
// EncodeStream before calling the handler. When the handler starts a stream,
// startStream calls the encoding's Start before the head goes out; a non-nil
// encoder then receives every StreamWriter.Write and writes its output to the
// stream, and StreamWriter.Flush flushes the encoder before the stream, so each
// flush reaches the client as data it can decode at once (an SSE event is seen
// when it is sent). The middleware ends the encoder after the handler returns
// (TakeStreamEncoder, then its own Close), while the stream is still open. A
// stream with a declared length (StreamLength) is never encoded.

import "io"

// StreamEncoding starts an encoder for a streamed response (see EncodeStream).
type StreamEncoding interface {
	// Start is called when the handler starts a streamed response, after its
	// headers are set and before they are sent: it may change them (set
	// Content-Encoding, make an ETag weak) and returns the encoder the body
	// goes through, which writes to dst, or nil to send the body as written.
	// dst is valid until the handler returns.
	Start(c *Context, status int, dst io.Writer) StreamEncoder
}

// StreamEncoder encodes a streamed response body into the dst Start gave it.
type StreamEncoder interface {
	io.Writer
	// Flush writes to dst all that was written so far, as output the client
	// can decode without what follows (gzip's sync flush, a zstd block, a
	// brotli metablock).
	Flush() error
}

// EncodeStream makes a streamed response that the handler starts from now on
// go through e (see StreamEncoding). It is for middleware, before it calls
// next; nil removes it.
func (c *Context) EncodeStream(e StreamEncoding) {
	c.stream.encoding = e
	c.touched |= tStream
}

// TakeStreamEncoder returns the encoder that the started stream's writes go
// through, and detaches it: later writes go to the stream as they are. The
// caller ends the encoded data (its Close). nil when no stream is encoded.
func (c *Context) TakeStreamEncoder() StreamEncoder {
	enc := c.stream.enc
	c.stream.enc = nil
	return enc
}

// startEncoder asks the stream's encoding for an encoder (startStream, before
// the head is written).
func (s *StreamWriter) startEncoder(status int) {
	if s.encoding != nil {
		s.enc = s.encoding.Start(s.c, status, (*rawStream)(s))
	}
}

// rawStream writes to the stream, past its encoder: the encoder's output.
type rawStream StreamWriter

func (r *rawStream) Write(p []byte) (int, error) { return r.w.Write(p) }
