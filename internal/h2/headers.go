package h2

import (
	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

// headerBlock is the header block being decoded (HEADERS + CONTINUATION).
// Owned by the event loop.
type headerBlock struct {
	active    bool // END_HEADERS not yet seen: only CONTINUATION may follow
	streamID  uint32
	s         *stream // target: a new request or trailers; nil when only decoding
	trailers  bool
	endStream bool
	ignore    bool          // decode and drop (stream beyond GOAWAY)
	discard   frame.ErrCode // when set, reset streamID with it after decoding
	discardOn bool
	raw       int   // raw block bytes (CVE-2024-27316 bound)
	size      int64 // decoded header list size (RFC 9113 §6.5.2)
	tooLarge  bool
	malformed string                // first §8.2/§8.3 violation
	head      httpfield.RequestHead // the pseudo-header fields and Host, and their rules
	xconnect  bool                  // extended CONNECT is enabled (Config.EnableConnectProtocol)
}

func (c *Conn) onHeaders(f *frame.Frame) error {
	id := f.StreamID
	// RFC 9113 §5.1.1: client streams are odd.
	if id%2 == 0 {
		return connErr(frame.ErrCodeProtocol, "even stream id from a client")
	}
	c.hb = headerBlock{streamID: id, endStream: f.EndStream(), xconnect: c.cfg.EnableConnectProtocol}
	hb := &c.hb
	selfDep := f.HasPriority && f.Priority.StreamDep == id
	switch s := c.streams[id]; {
	case s != nil:
		switch {
		case s.remoteDone:
			// RFC 9113 §5.1: half-closed (remote) accepts no HEADERS.
			hb.discardWith(frame.ErrCodeStreamClosed)
		case !f.EndStream():
			// RFC 9113 §8.1: trailers end the stream; a HEADERS frame without
			// END_STREAM after the request head makes the request malformed.
			hb.s, hb.trailers = s, true
			hb.malformed = "trailers without END_STREAM"
		case selfDep:
			hb.discardWith(frame.ErrCodeProtocol)
		default:
			hb.s, hb.trailers = s, true
		}
	case id <= c.maxStreamID:
		switch c.closedHow(id) {
		case closedByPeer, closedByUs:
			// RFC 9113 §5.1: after RST_STREAM, a stream error STREAM_CLOSED.
			hb.discardWith(frame.ErrCodeStreamClosed)
		case closedNormally:
			return connErr(frame.ErrCodeStreamClosed, "HEADERS on a closed stream")
		default:
			// RFC 9113 §5.1.1: stream ids only grow.
			return connErr(frame.ErrCodeProtocol, "stream id lower than a previous one")
		}
	default:
		c.maxStreamID = id
		switch {
		case c.goingAway:
			hb.ignore = true // RFC 9113 §6.8: streams after GOAWAY are ignored
		case selfDep:
			// RFC 9113 §5.3.1: a stream cannot depend on itself.
			hb.discardWith(frame.ErrCodeProtocol)
		case len(c.streams) >= int(c.cfg.MaxConcurrentStreams):
			// RFC 9113 §5.1.2: streams beyond the advertised limit are refused.
			hb.discardWith(frame.ErrCodeRefusedStream)
		default:
			hb.s = c.newStream(id)
		}
	}
	return c.headerFragment(f.Data, f.EndHeaders())
}

func (hb *headerBlock) discardWith(code frame.ErrCode) {
	hb.discard, hb.discardOn = code, true
}

// headerFragment feeds one fragment of the block to the HPACK decoder. The decoder
// must see every block, even one we refuse, to keep its table in step (RFC 7541).
func (c *Conn) headerFragment(p []byte, end bool) error {
	hb := &c.hb
	hb.raw += len(p)
	// CVE-2024-27316 (CONTINUATION flood): the raw block is bounded whatever the
	// number of frames.
	if hb.raw > int(c.cfg.MaxHeaderListSize)+int(c.cfg.MaxFrameSize) {
		return connErr(frame.ErrCodeEnhanceYourCalm, "header block too large")
	}
	if len(p) == 0 && !end {
		// CVE-2019-9518: empty fragments cost work and carry nothing.
		if err := c.defenses.emptyFrame(c); err != nil {
			return err
		}
	}
	whole := end && !hb.active // the block is this one fragment
	if whole && c.dc.ok && string(p) == string(c.dc.block) {
		// The block the decoder saw last, which left the table as it was: it
		// decodes to the same fields again (decodeCache).
		for _, f := range c.dc.fields {
			c.takeField(f.f, f.msg)
		}
		c.hdec.SetEmitEnabled(true)
		return c.endHeaders()
	}
	c.dc.ok = false // the table may change
	c.dc.recording = whole && len(p) <= maxCachedBlock && tableNeutral(p)
	c.dc.fields = c.dc.fields[:0]
	_, err := c.hdec.Write(p)
	if err != nil {
		c.dc.recording = false
		return connErr(frame.ErrCodeCompression, "HPACK decoding failed")
	}
	if !end {
		hb.active = true
		return nil
	}
	hb.active = false
	err = c.hdec.Close()
	c.hdec.SetEmitEnabled(true)
	if err != nil {
		c.dc.recording = false
		return connErr(frame.ErrCodeCompression, "HPACK decoding failed")
	}
	if c.dc.recording {
		c.dc.recording = false
		if !hb.tooLarge && len(c.dc.fields) <= maxCachedFields {
			c.dc.ok = true
			c.dc.block = append(c.dc.block[:0], p...)
		}
	}
	return c.endHeaders()
}

// decodeCache remembers the last header block when it left the HPACK dynamic
// table alone: indexed fields and literals without or never indexed only (RFC
// 7541 §6.1, §6.2.2, §6.2.3). Such a block neither adds to nor evicts from the
// table, so as long as no other block was decoded since, the same bytes decode
// to the same fields, and a client repeating a request (the common case on a busy
// connection) skips the HPACK decoder. The field strings are immutable (table
// entries, or strings the decoder made for the literals), so they stay valid.
// Owned by the event loop.
type decodeCache struct {
	ok        bool
	recording bool // onField appends to fields
	block     []byte
	fields    []cachedField
}

// cachedField is a decoded field with its validField verdict.
type cachedField struct {
	f   hpack.HeaderField
	msg string
}

const (
	maxCachedBlock  = 256
	maxCachedFields = 32
)

// tableNeutral reports whether the header block p holds only representations
// that leave the dynamic table unchanged: no literal with incremental indexing,
// no dynamic table size update. A malformed block reports false (the decoder
// then judges it).
func tableNeutral(p []byte) bool {
	if len(p) == 0 {
		return false
	}
	for i := 0; i < len(p); {
		b := p[i]
		switch {
		case b&0x80 != 0: // indexed field (§6.1)
			var ok bool
			if _, i, ok = hpackInt(p, i, 7); !ok {
				return false
			}
		case b&0xe0 == 0: // literal without (0000) or never (0001) indexing (§6.2.2-3)
			var idx uint64
			var ok bool
			if idx, i, ok = hpackInt(p, i, 4); !ok {
				return false
			}
			if idx == 0 { // literal name
				if i, ok = skipHpackString(p, i); !ok {
					return false
				}
			}
			if i, ok = skipHpackString(p, i); !ok {
				return false
			}
		default: // incremental indexing (01) or table size update (001)
			return false
		}
	}
	return true
}

// hpackInt reads an integer with an n-bit prefix at p[i] (RFC 7541 §5.1); it
// returns the value, the index after it, and false when p ends first or the
// value overflows.
func hpackInt(p []byte, i int, n uint) (uint64, int, bool) {
	if i >= len(p) {
		return 0, i, false
	}
	k := uint64(1)<<n - 1
	v := uint64(p[i]) & k
	i++
	if v < k {
		return v, i, true
	}
	for shift := uint(0); i < len(p) && shift < 56; shift += 7 {
		b := p[i]
		i++
		v += uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, i, true
		}
	}
	return 0, i, false
}

// skipHpackString returns the index after the string literal at p[i] (§5.2).
func skipHpackString(p []byte, i int) (int, bool) {
	n, i, ok := hpackInt(p, i, 7)
	if !ok || n > uint64(len(p)-i) {
		return i, false
	}
	return i + int(n), true
}

// onField is the HPACK decoder's emit function: it validates one field (RFC 9113
// §8.2, §8.3) and stores it in the target request (takeField).
func (c *Conn) onField(f hpack.HeaderField) {
	msg := httpfield.CheckRequestField(f.Name, f.Value)
	if c.dc.recording {
		c.dc.fields = append(c.dc.fields, cachedField{f, msg})
	}
	c.takeField(f, msg)
}

// takeField stores one decoded field; msg is its CheckRequestField verdict.
func (c *Conn) takeField(f hpack.HeaderField, msg string) {
	hb := &c.hb
	// HPACK bomb: the decoded list is bounded whatever the compression ratio.
	hb.size += int64(len(f.Name) + len(f.Value) + 32)
	if hb.size > int64(c.cfg.MaxHeaderListSize) {
		hb.tooLarge = true
		c.hdec.SetEmitEnabled(false) // keep decoding (table state) without emitting
		return
	}
	if hb.s == nil || hb.malformed != "" {
		return
	}
	if msg != "" {
		hb.malformed = msg
		return
	}
	req := &hb.s.req
	if hb.trailers {
		// RFC 9113 §8.1: no pseudo-header field; §8.2.2: no connection-specific
		// field, in any field section.
		if msg := httpfield.TrailerPlace(f.Name); msg != "" {
			hb.malformed = msg
			return
		}
		req.Trailer = appendField(req.Trailer, f.Name, f.Value)
		return
	}
	// RFC 9113 §8.2.2 (connection-specific fields, TE), §8.3 (pseudo-header
	// fields: their set, order and repetition).
	if msg := hb.head.Placed(f.Name, f.Value, hb.xconnect); msg != "" {
		hb.malformed = msg
		return
	}
	if f.Name[0] == ':' {
		return
	}
	switch f.Name {
	case "content-length":
		n, ok := bytesconv.ParseUint(bytesconv.S2B(f.Value), 1<<62)
		if !ok || (hb.s.declLen >= 0 && hb.s.declLen != int64(n)) {
			hb.malformed = "bad content-length"
			return
		}
		hb.s.declLen = int64(n)
	}
	req.Header = appendField(req.Header, f.Name, f.Value)
}

// endHeaders acts on a complete header block.
func (c *Conn) endHeaders() error {
	hb := &c.hb
	if hb.ignore {
		return nil
	}
	if hb.discardOn {
		if hb.discard == frame.ErrCodeRefusedStream {
			if err := c.defenses.controlFrame(c); err != nil {
				return err
			}
		}
		return streamErr(hb.streamID, hb.discard, "header block refused")
	}
	s := hb.s
	if s == nil {
		return nil
	}
	if hb.trailers {
		if hb.tooLarge {
			hb.malformed = "trailers too large"
		}
		if hb.malformed != "" {
			c.malformedRequest(s, hb.malformed)
			return nil
		}
		c.endRequest(s)
		return nil
	}
	c.streams[s.id] = s
	c.count(s)
	if hb.tooLarge {
		// RFC 9113 §10.5.1: a header list over the limit may be answered 431.
		s.remoteDone = hb.endStream
		c.rejectRequest(s, 431)
		return nil
	}
	if hb.malformed == "" {
		// RFC 9113 §8.3.1; its Host rule is a SHOULD, left off (httpfield).
		hb.malformed = hb.head.Check(false)
	}
	// RFC 9113 §8.1.1: END_STREAM with a non-zero content-length is malformed.
	if hb.malformed == "" && hb.endStream && s.declLen > 0 {
		hb.malformed = "content-length without body"
	}
	if hb.malformed != "" {
		s.remoteDone = hb.endStream
		c.malformedRequest(s, hb.malformed)
		return nil
	}
	c.startRequest(s)
	return nil
}

// malformedRequest answers a malformed request (RFC 9113 §8.1.1): "Malformed
// requests or responses that are detected MUST be treated as a stream error of
// type PROTOCOL_ERROR. For malformed requests, a server MAY send an HTTP response
// prior to closing or resetting the stream." Unless a response already started,
// a 400 head goes first (without END_STREAM, so the RST_STREAM that follows is
// legal on the stream): Go's client (net/http's bundled HTTP/2 transport) retries
// a request reset with PROTOCOL_ERROR on a new connection, with backoff, for about
// a minute (golang/go#47635), so a bare reset looks like a server that never
// answers; with a response head it returns the 400 (golang/go#49645). Every
// path that finds a request malformed ends here.
func (c *Conn) malformedRequest(s *stream, reason string) {
	if s.closed {
		return
	}
	c.log.Debug("h2: malformed request", "remote", c.remote, "stream", s.id, "reason", reason)
	// The answer is queued on the peer's initiative, as a REFUSED_STREAM reset
	// is: a peer sending malformed requests without reading its answers hits the
	// control frame bound. The reset counts against the rapid reset budget
	// (CVE-2025-8671, MadeYouReset: see resetForPeer).
	if err := c.defenses.controlFrame(c); err != nil {
		c.handleError(err)
		return
	}
	c.mu.Lock()
	answer := c.claimResponse(s)
	c.mu.Unlock()
	c.answerMalformed(s, answer)
}

// claimResponse takes the response of a malformed request for the 400 when no
// handler answered yet: the handler, if one runs, now finds the response taken
// (and the stream dead once reset). It reports whether it took it. c.mu held.
func (c *Conn) claimResponse(s *stream) bool {
	answer := s.sh.status == 0 && !s.hdrSent
	if answer {
		s.sh.status, s.sh.ended = 400, true
	}
	return answer
}

// answerMalformed sends the 400 head when answer (claimResponse took the
// response), then RST_STREAM PROTOCOL_ERROR.
func (c *Conn) answerMalformed(s *stream, answer bool) {
	if answer {
		c.writeRefusal(s, 400, c.refusal(400), -1, false)
	}
	if err := c.resetForPeer(s, frame.ErrCodeProtocol); err != nil {
		c.handleError(err)
	}
}

// startRequest fills the request of a new stream and hands it to Prepare.
func (c *Conn) startRequest(s *stream) {
	hb := &c.hb
	r := &s.req
	h := &hb.head
	r.Method, r.Scheme, r.RequestURI = h.Method, h.Scheme, h.Path
	r.Path, r.RawQuery = h.PathQuery()
	r.Host = h.HostValue()
	r.ContentLength = s.declLen
	if hb.endStream {
		r.ContentLength = 0
	}
	s.isHead = r.Method == "HEAD"
	s.remoteDone = hb.endStream
	if h.Protocol != "" {
		// RFC 8441: the protocol reaches the handler as a field, as net/http's
		// HTTP/2 server gives it (r.Header[":protocol"]); the stream is a tunnel.
		r.Header = appendField(r.Header, ":protocol", h.Protocol)
		s.tunnel = true
	}
	c.lastProcessed = s.id
	if s.declLen > c.cfg.MaxRequestBodySize {
		c.rejectRequest(s, 413)
		return
	}
	// What an inline handler streams is queued whole (its handler must not block
	// the loop; a large body or file moves to a worker by itself), so while the connection's output waits (the engine holds more than
	// outboundLimit, or a stream waits for window) the route runs on a worker,
	// whose writes wait within the output bound instead.
	s.inline = c.h.Prepare(r) && !c.heldBack && len(c.sendq) == 0
	switch {
	case s.remoteDone:
		c.dispatch(s)
	case s.inline && s.declLen <= maxInlineBody && !s.tunnel:
		s.buffering = true // streamed instead if it grows past maxInlineBody
	default:
		// A body to stream: reading it would block the loop. A tunnel's DATA
		// never ends while it is open, so waiting for the whole of it to run
		// the handler inline (a refusal of the extended CONNECT) would never
		// answer.
		s.inline = false
		r.BodyReader = &s.reader
		c.dispatch(s)
	}
}

// appendField appends a field, reusing fs's capacity.
func appendField(fs []httpmsg.Field, name, value string) []httpmsg.Field {
	return append(fs, httpmsg.Field{Name: name, Value: value})
}
