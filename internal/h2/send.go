package h2

import (
	"strconv"
	"strings"

	"golang.org/x/net/http2/hpack"

	"github.com/celeris-dev/celeris/httpfield"
	"github.com/celeris-dev/celeris/internal/bytesconv"
	"github.com/celeris-dev/celeris/internal/h2/frame"
	"github.com/celeris-dev/celeris/internal/httpmsg"
)

const (
	// maxQueued is how many unsent body bytes of one stream a worker may queue
	// before Write blocks (backpressure).
	maxQueued = 256 << 10
	// wakeQueued is how many queued bytes make Write wake the loop without Flush.
	wakeQueued = 16 << 10
	// outboundLimit is how many unsent bytes the engine may hold before DATA waits
	// (only with an httpmsg.OutboundReporter).
	outboundLimit = 1 << 20
	// directWrite is the DATA payload size above which the payload goes to the
	// engine directly instead of through c.out (one copy less).
	directWrite = 4 << 10
)

// service handles a stream that a handler put on the ready list.
func (c *Conn) service(s *stream) {
	c.mu.Lock()
	s.sh.inReady = false
	done := s.sh.done
	consumed := s.sh.consumed
	s.sh.consumed = 0
	if !s.closed {
		c.pumpLocked(s)
	}
	c.mu.Unlock()
	if consumed > 0 {
		c.recvCredit += consumed
		if !s.closed {
			s.recvCredit += consumed
			c.grantStreamCredit(s)
		}
	}
	if done && s.running {
		s.running = false
		c.handlers--
		c.handlerReturned(s)
		c.startWaiting()
		return
	}
	c.maybeFinish(s)
}

// pumpLocked moves the stream's queued response to the output: HEADERS first,
// then DATA as the windows allow, then END_STREAM or trailers. c.mu is held.
func (c *Conn) pumpLocked(s *stream) {
	sh := &s.sh
	if len(sh.interim) > 0 {
		c.writeInterims(s)
	}
	if sh.hdrReady {
		if sh.whole && !sh.done {
			return // WriteResponse: framed once Serve returned (writer.go)
		}
		sh.hdrReady = false
		s.noBody = s.isHead || bodyless(sh.status)
		if s.noBody {
			sh.data, sh.rd = sh.data[:0], 0
		}
		end := sh.ended && len(sh.data) == sh.rd && !sh.hasTrl
		c.writeHeaders(s, sh.status, sh.hdr.fields, sh.length, end)
		sh.hdr = sh.hdr.reset()
		if end {
			return
		}
	}
	if !s.hdrSent || s.localDone {
		return
	}
	if s.noBody {
		sh.data, sh.rd = sh.data[:0], 0
	}
	if sh.rd < len(sh.data) {
		if !s.inPlace && c.holdData() {
			c.enqueueSend(s)
			return
		}
		sh.rd += c.sendData(s, sh.data[sh.rd:], sh.ended && !sh.hasTrl)
		if sh.rd == len(sh.data) {
			sh.data, sh.rd = sh.data[:0], 0
		} else if sh.rd >= 64<<10 && sh.rd >= len(sh.data)/2 {
			n := copy(sh.data, sh.data[sh.rd:])
			sh.data, sh.rd = sh.data[:n], 0
		}
	}
	if sh.blocked && len(sh.data)-sh.rd < maxQueued {
		sh.blocked = false
		s.cond.Broadcast()
	}
	if sh.rd < len(sh.data) {
		c.enqueueSend(s)
		return
	}
	if sh.ended && !s.localDone {
		if sh.hasTrl {
			c.writeTrailers(s, sh.trailer.fields)
			sh.trailer = sh.trailer.reset()
		} else {
			c.out = frame.AppendData(c.out, s.id, true, nil)
			s.localDone = true
		}
	}
}

// DrainLevel is the engine output level the connection waits for (event loop,
// engine's drain watch): outboundLimit while DATA is held back, else -1.
func (c *Conn) DrainLevel() int {
	c.enter()
	if c.heldBack {
		return outboundLimit
	}
	return -1
}

// holdData reports that the engine holds more than outboundLimit unsent bytes
// (see httpmsg.OutboundReporter): DATA then waits for a later callback. Not
// for a stream whose handler runs in place (the caller asks; direct.go).
func (c *Conn) holdData() bool {
	if c.outbound != nil && c.outbound() > outboundLimit {
		c.heldBack = true
		return true
	}
	return false
}

func (c *Conn) enqueueSend(s *stream) {
	if !s.inSendq {
		s.inSendq = true
		c.sendq = append(c.sendq, s)
	}
}

// runSendq retries the streams waiting for flow-control window, in order.
func (c *Conn) runSendq() {
	q := c.sendq
	c.sendq = nil
	for i, s := range q {
		q[i] = nil
		s.inSendq = false
		if s.closed {
			c.maybeRecycle(s)
			continue
		}
		c.mu.Lock()
		c.pumpLocked(s)
		c.mu.Unlock()
		c.maybeFinish(s)
	}
	if c.sendq == nil {
		c.sendq = q[:0]
	} else {
		c.sendq = append(q[:0], c.sendq...)
	}
}

// sendData frames p as DATA within the peer's frame size and the stream and
// connection send windows (RFC 9113 §6.9.1). It returns how many bytes it sent;
// END_STREAM goes on the last frame when end is set and all of p fits.
//
// With an httpmsg.OutboundReporter, one callback hands the engine at most outboundLimit
// bytes of DATA (holdData looks at the engine's unsent output only before): a peer
// that grants large windows and never reads would otherwise get a whole complete
// response framed into the engine's buffer at once. The rest waits in the send
// queue for the next callback, which the Conn asks for with Wake.
func (c *Conn) sendData(s *stream, p []byte, end bool) int {
	sent := 0
	for sent < len(p) {
		n := int64(len(p) - sent)
		n = min(n, s.sendWindow, c.sendWindow, int64(c.peerMaxFrame))
		if n <= 0 {
			break
		}
		if c.outbound != nil && !c.d.placing && !s.inPlace {
			if n = min(n, int64(outboundLimit-c.dataOut)); n <= 0 {
				c.sendqDirty = true
				if !c.dataWake {
					c.dataWake = true
					c.nc.Wake()
				}
				break
			}
			c.dataOut += int(n)
		}
		last := end && sent+int(n) == len(p)
		chunk := p[sent : sent+int(n)]
		if n >= directWrite && !c.d.placing && !s.inPlace {
			c.out = frame.AppendHeader(c.out, int(n), frame.TypeData, endFlag(last), s.id)
			c.nc.Write(c.out)
			c.out = c.out[:0]
			c.nc.Write(chunk)
		} else {
			c.out = frame.AppendData(c.out, s.id, last, chunk)
		}
		s.sendWindow -= n
		c.sendWindow -= n
		sent += int(n)
		if last {
			s.localDone = true
		}
	}
	return sent
}

func endFlag(end bool) frame.Flags {
	if end {
		return frame.FlagEndStream
	}
	return 0
}

// bodyless reports a status whose response has no content (RFC 9110 §6.4.1).
func bodyless(status int) bool {
	return status < 200 || status == 204 || status == 304
}

// respondError answers s with an empty response of the given status from the loop,
// with fields (Config.RefusalFields' for a request no handler saw).
func (c *Conn) respondError(s *stream, status int, fields []httpmsg.Field) {
	if s.closed || s.hdrSent {
		return
	}
	c.mu.Lock()
	s.sh.status = status
	s.sh.ended = true
	c.mu.Unlock()
	c.writeHeaders(s, status, fields, 0, true)
}

// refusal returns Config.RefusalFields for status (nil when unset).
func (c *Conn) refusal(status int) []httpmsg.Field {
	if f := c.cfg.RefusalFields; f != nil {
		return f(status)
	}
	return nil
}

// respondRefusal is respondError for a request no handler saw: the head carries
// Config.RefusalFields, and the body is Config.RefusalBody's (see writeRefusal).
func (c *Conn) respondRefusal(s *stream, status int) {
	if s.closed || s.hdrSent {
		return
	}
	c.mu.Lock()
	s.sh.status = status
	s.sh.ended = true
	c.mu.Unlock()
	c.writeRefusal(s, status, c.refusal(status), 0, true)
}

// writeRefusal writes the head of a refusal with fields and, when
// Config.RefusalBody gives one that fits the send windows, its body with its
// content-type; otherwise the head alone, with length (-1: no content-length).
// end sets END_STREAM on the last frame.
func (c *Conn) writeRefusal(s *stream, status int, fields []httpmsg.Field, length int64, end bool) {
	var ct string
	var body []byte
	if f := c.cfg.RefusalBody; f != nil && !s.isHead {
		ct, body = f(status)
	}
	if len(body) == 0 || int64(len(body)) > min(s.sendWindow, c.sendWindow) {
		c.writeHeaders(s, status, fields, length, end)
		return
	}
	if ct != "" && httpfield.ValidValue(ct) {
		fields = append(fields[:len(fields):len(fields)], httpmsg.Field{Name: "content-type", Value: ct})
	}
	c.writeHeaders(s, status, fields, int64(len(body)), false)
	c.sendData(s, body, end)
}

// rejectRequest answers a request the handler never sees with an error response
// (empty, or Config.RefusalBody's), then closes the stream; a client still
// sending is asked to stop with RST_STREAM NO_ERROR (RFC 9113 §8.1).
func (c *Conn) rejectRequest(s *stream, status int) {
	c.respondRefusal(s, status)
	if s.remoteDone {
		c.closeStream(s, closedNormally)
		return
	}
	c.resetStream(s, frame.ErrCodeNo)
}

// writeHeaders encodes the response head and writes HEADERS (+CONTINUATION).
// length < 0 omits content-length. RFC 9113 §8.2.2: connection-specific fields
// are dropped; §8.2: names are sent in lower case.
func (c *Conn) writeHeaders(s *stream, status int, fields []httpmsg.Field, length int64, end bool) {
	if d := bytesconv.Date(); len(c.dateSrc) == 0 || &d[0] != &c.dateSrc[0] {
		// The Date slice is never modified once published, so a string over it
		// may live in the HPACK table.
		c.dateSrc, c.dateStr = d, bytesconv.B2S(d)
	}
	// Classify the fields once: uniq[i] is the uniqueNames index of fields[i], or -1.
	c.uniq = c.uniq[:0]
	nUnique := 0
	for _, f := range fields {
		u := uniqueIndex(f.Name)
		if u >= 0 {
			nUnique++
		}
		c.uniq = append(c.uniq, int8(u))
	}
	if c.hc.match(status, fields, c.uniq, length, c.dateStr) {
		c.hw.b = append(c.hw.b[:0], c.hc.block...)
	} else {
		c.hw.b = c.hw.b[:0]
		c.indexedOnly = true
		c.encode(":status", statusString(status), false)
		for i, f := range fields {
			if c.uniq[i] >= 0 {
				continue // encoded after the cacheable part
			}
			if !httpfield.ValidResponseField(f.Name, f.Value) {
				continue // dropped, as by every writer (response splitting)
			}
			name := c.lowerName(f.Name)
			if httpfield.ConnectionSpecific(name) {
				continue // RFC 9113 §8.2.2
			}
			switch name {
			case "te", "date":
				continue
			case "content-length":
				if length >= 0 {
					continue
				}
			}
			c.encode(name, f.Value, true)
		}
		if length >= 0 && !bodyless(status) {
			c.scratch = bytesconv.AppendUint(c.scratch[:0], uint64(length))
			c.encode("content-length", bytesconv.B2S(c.scratch), true)
		}
		c.encode("date", c.dateStr, false)
		c.hc.store(c, status, fields, length)
	}
	// Fields unique to each response (a request id) go last, as literals never
	// indexed: they leave the HPACK table, and so the cached prefix, unchanged.
	for i := 0; nUnique > 0 && i < len(fields); i++ {
		if u := c.uniq[i]; u >= 0 {
			if httpfield.ValidValue(fields[i].Value) { // a uniqueNames name is valid
				c.hw.b = appendUnique(c.hw.b, int(u), fields[i].Value)
			}
			nUnique--
		}
	}
	c.writeBlock(s.id, c.hw.b, end)
	s.hdrSent = true
	if end {
		s.localDone = true
	}
}

// hdrCache remembers the last response head whose every field encoded as an
// indexed HPACK reference. Such a block leaves the encoder's table unchanged, so
// until another block changes it, the same head encodes to the same bytes, which
// are reused instead of searching the table again. Owned by the event loop.
type hdrCache struct {
	ok     bool
	status int
	length int64
	date   string
	fields []httpmsg.Field // interned: safe to keep
	block  []byte
}

// match reports whether the head (uniq classifies fields, see writeHeaders)
// is the cached one.
func (h *hdrCache) match(status int, fields []httpmsg.Field, uniq []int8, length int64, date string) bool {
	if !h.ok || h.status != status || h.length != length || h.date != date {
		return false
	}
	i := 0
	for j, f := range fields {
		if uniq[j] >= 0 {
			continue
		}
		if i >= len(h.fields) || f != h.fields[i] {
			return false
		}
		i++
	}
	return i == len(h.fields)
}

func (h *hdrCache) store(c *Conn, status int, fields []httpmsg.Field, length int64) {
	h.ok = false
	if !c.indexedOnly || len(fields) > 16 {
		return
	}
	h.fields = h.fields[:0]
	for i, f := range fields {
		if c.uniq[i] >= 0 {
			continue
		}
		v, ok := c.internValue(f.Value)
		if !ok {
			return
		}
		h.fields = append(h.fields, httpmsg.Field{Name: c.internString(f.Name), Value: v})
	}
	h.ok, h.status, h.length, h.date = true, status, length, c.dateStr
	h.block = append(h.block[:0], c.hw.b...)
}

// writeTrailers sends trailer fields as the final HEADERS with END_STREAM. The
// fields RFC 9110 §6.5.1 keeps out of trailers are dropped
// (httpfield.ForbiddenTrailer; pseudo-header fields among them, RFC 9113 §8.1).
func (c *Conn) writeTrailers(s *stream, fields []httpmsg.Field) {
	c.hw.b = c.hw.b[:0]
	for _, f := range fields {
		if httpfield.ValidResponseField(f.Name, f.Value) && !httpfield.ForbiddenTrailer(f.Name) {
			c.encode(c.lowerName(f.Name), f.Value, true)
		}
	}
	c.writeBlock(s.id, c.hw.b, true)
	s.localDone = true
}

// writeBlock writes a header block as HEADERS and, past the peer's
// SETTINGS_MAX_FRAME_SIZE, CONTINUATION frames (RFC 9113 §4.3).
func (c *Conn) writeBlock(id uint32, block []byte, end bool) {
	max := int(c.peerMaxFrame)
	first := block[:min(len(block), max)]
	block = block[len(first):]
	c.out = frame.AppendHeaders(c.out, id, end, len(block) == 0, first)
	for len(block) > 0 {
		n := min(len(block), max)
		c.out = frame.AppendContinuation(c.out, id, n == len(block), block[:n])
		block = block[n:]
	}
}

// encode writes one field with the connection's HPACK encoder. The encoder's
// dynamic table keeps the strings it indexes, so borrowed strings (mayBorrow) are
// interned first; a value that cannot be interned is sent never-indexed.
func (c *Conn) encode(name, value string, mayBorrow bool) {
	sensitive := false
	if mayBorrow {
		name = c.internString(name)
		if uniqueValues(name) {
			// A value that differs on every response would only evict useful
			// entries from both peers' dynamic tables (and cost an intern copy).
			sensitive = true
		} else if v, ok := c.internValue(value); ok {
			value = v
		} else {
			sensitive = true
		}
	}
	n := len(c.hw.b)
	_ = c.henc.WriteField(hpack.HeaderField{Name: name, Value: value, Sensitive: sensitive})
	switch {
	case sensitive:
		// Never indexed (RFC 7541 §6.2.3): the table is unchanged. A regular field
		// sent this way makes the block uncacheable; a unique one is never cached.
		if !uniqueValues(name) {
			c.indexedOnly = false
		}
	case c.hw.b[n]&0x80 == 0:
		// Not an indexed reference: the table may have changed (RFC 7541 §6).
		c.indexedOnly = false
		c.hc.ok = false
	}
}

const (
	maxIntern    = 512 // interned strings per connection before the table restarts
	maxInternLen = 128 // longer values are sent never-indexed instead
)

// internString returns a string equal to s that is owned by the connection.
func (c *Conn) internString(s string) string {
	if v, ok := c.intern[s]; ok {
		return v
	}
	if len(c.intern) >= maxIntern {
		clear(c.intern)
	}
	v := strings.Clone(s)
	c.intern[v] = v
	return v
}

func (c *Conn) internValue(s string) (string, bool) {
	if v, ok := c.intern[s]; ok {
		return v, true
	}
	if len(s) > maxInternLen {
		return "", false
	}
	return c.internString(s), true
}

// uniqueValues reports fields whose values are (nearly) unique per response:
// they are sent as literals never indexed (RFC 7541 §6.2.3), never interned.
func uniqueValues(name string) bool { return uniqueIndex(name) >= 0 }

// uniqueIndex returns the index in uniqueNames of name in any case, or -1,
// without allocating.
func uniqueIndex(name string) int {
	if len(name) >= len(uniqueByLen) {
		return -1
	}
	for _, i := range uniqueByLen[len(name)] {
		if httpmsg.EqualFold(name, uniqueNames[i]) {
			return int(i)
		}
	}
	return -1
}

var uniqueNames = [...]string{"x-request-id", "x-correlation-id", "traceparent", "tracestate", "etag",
	"last-modified", "set-cookie", "location", "content-range", "age", "expires"}

// uniqueByLen lists the indexes of uniqueNames by name length.
var uniqueByLen = func() (t [17][]uint8) {
	for i, n := range uniqueNames {
		t[len(n)] = append(t[len(n)], uint8(i))
	}
	return t
}()

// uniqueLits[i] starts the never-indexed literal (RFC 7541 §6.2.3) of a field
// named uniqueNames[i]: the representation's prefix and the name, as a static
// table index or a Huffman-coded literal, as the HPACK encoder would write them.
// Only the value's string follows (appendUnique). The representation neither
// reads nor changes the dynamic table, so the bytes hold for every connection.
var uniqueLits = func() (t [len(uniqueNames)][]byte) {
	var w blockWriter
	e := hpack.NewEncoder(&w)
	for i, n := range uniqueNames {
		w.b = w.b[:0]
		_ = e.WriteField(hpack.HeaderField{Name: n, Sensitive: true})
		// The empty value is the last byte, 0x00 (length 0, no Huffman).
		t[i] = append([]byte(nil), w.b[:len(w.b)-1]...)
	}
	return t
}()

// appendUnique appends the never-indexed literal of a field named
// uniqueNames[u] with the value as a raw string: these values change with every
// response, and Huffman-coding each one costs more CPU than the few bytes it
// saves (RFC 7541 §5.2 leaves the choice to the encoder).
func appendUnique(b []byte, u int, value string) []byte {
	b = append(b, uniqueLits[u]...)
	b = appendHpackInt(b, 7, 0, uint64(len(value)))
	return append(b, value...)
}

// appendHpackInt appends i as an HPACK integer with an n-bit prefix (RFC 7541
// §5.1); first holds the bits above the prefix.
func appendHpackInt(b []byte, n uint, first byte, i uint64) []byte {
	k := uint64(1)<<n - 1
	if i < k {
		return append(b, first|byte(i))
	}
	b = append(b, first|byte(k))
	i -= k
	for ; i >= 128; i >>= 7 {
		b = append(b, byte(0x80|(i&0x7f)))
	}
	return append(b, byte(i))
}

// lowerName returns name in lower case, without allocating when it already is.
func (c *Conn) lowerName(name string) string {
	for i := 0; i < len(name); i++ {
		if 'A' <= name[i] && name[i] <= 'Z' {
			c.scratch = append(c.scratch[:0], name...)
			for j := i; j < len(c.scratch); j++ {
				if b := c.scratch[j]; 'A' <= b && b <= 'Z' {
					c.scratch[j] = b + 'a' - 'A'
				}
			}
			return c.internString(bytesconv.B2S(c.scratch))
		}
	}
	return name
}

// statusStrings holds the three-digit status codes, so encoding one never
// allocates.
var statusStrings = func() (t [600]string) {
	for i := 100; i < len(t); i++ {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

func statusString(code int) string {
	if code >= 100 && code < len(statusStrings) {
		return statusStrings[code]
	}
	return strconv.Itoa(code)
}
