package celerish3

// Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2).
const (
	streamTypeControl      = 0x00
	streamTypePush         = 0x01
	streamTypeQPACKEncoder = 0x02
	streamTypeQPACKDecoder = 0x03
)

// maxControlFrame bounds the payload of a SETTINGS, GOAWAY, MAX_PUSH_ID or
// CANCEL_PUSH frame the server buffers: a SETTINGS frame carries a few
// settings; a larger one is refused with H3_EXCESSIVE_LOAD rather than held.
const maxControlFrame = 4 << 10

// uniStreamRule says how to treat a client's unidirectional stream of type typ
// (RFC 9114 §6.2): critical reports a control or QPACK stream, which must stay
// open for the connection's life (§6.2.1, RFC 9204 §4.2); ignore reports a
// type the server does not use (reserved or unknown: §6.2, "recipients of
// unknown stream types MUST either abort reading of the stream or discard
// incoming data", with H3_STREAM_CREATION_ERROR when aborting). seen holds the
// critical stream types already open; a second one of a type is an error.
func uniStreamRule(typ uint64, seen *[4]bool) (critical, ignore bool, err error) {
	switch typ {
	case streamTypeControl, streamTypeQPACKEncoder, streamTypeQPACKDecoder:
		if seen[typ] {
			// §6.2.1: "Only one control stream per peer is permitted; receipt
			// of a second stream claiming to be a control stream MUST be
			// treated as a connection error of type H3_STREAM_CREATION_ERROR";
			// RFC 9204 §4.2 the same for each QPACK stream.
			return false, false, connErr(ErrCodeStreamCreation, "second control or QPACK stream")
		}
		seen[typ] = true
		return true, false, nil
	case streamTypePush:
		// §6.2.2: "Only servers can push; if a server receives a
		// client-initiated push stream, this MUST be treated as a connection
		// error of type H3_STREAM_CREATION_ERROR."
		return false, false, connErr(ErrCodeStreamCreation, "push stream from a client")
	}
	return false, true, nil
}

// errCriticalClosed: RFC 9114 §6.2.1, "If either control stream is closed at
// any point, this MUST be treated as a connection error of type
// H3_CLOSED_CRITICAL_STREAM"; RFC 9204 §4.2 the same for the QPACK streams.
var errCriticalClosed = connErr(ErrCodeClosedCriticalStream, "critical stream closed")

// controlParser consumes the client's control stream (RFC 9114 §6.2.1): SETTINGS
// first, then GOAWAY, MAX_PUSH_ID and frames to skip. It is pure: the stream's
// bytes go in, state and errors come out.
type controlParser struct {
	sawSettings bool
	settings    peerSettings
	skip        uint64 // payload bytes left of a frame being skipped

	sawGoAway bool
	goAwayID  uint64 // the last GOAWAY's push ID
	sawMaxPID bool
	maxPushID uint64
}

// feed consumes whole frames from buf and returns how many bytes it used; the
// caller keeps the rest and calls again with more bytes appended.
func (p *controlParser) feed(buf []byte) (int, error) {
	used := 0
	for {
		if p.skip > 0 {
			n := min(p.skip, uint64(len(buf)-used))
			p.skip -= n
			used += int(n)
			if p.skip > 0 {
				return used, nil
			}
		}
		typ, length, n := parseFrameHeader(buf[used:])
		if n == 0 {
			return used, nil
		}
		if !p.sawSettings {
			if typ != frameSettings {
				// §6.2.1: "If the first frame of the control stream is any
				// other frame type, this MUST be treated as a connection error
				// of type H3_MISSING_SETTINGS."
				return used, connErr(ErrCodeMissingSettings, "first control frame is not SETTINGS")
			}
		} else if skip, err := controlFrameRule(typ); err != nil {
			return used, err
		} else if skip {
			used += n
			p.skip = length
			continue
		}
		if length > maxControlFrame {
			return used, connErr(ErrCodeExcessiveLoad, "control frame too large")
		}
		if uint64(len(buf)-used-n) < length {
			return used, nil // need the whole payload
		}
		payload := buf[used+n : used+n+int(length)]
		if err := p.frame(typ, payload); err != nil {
			return used, err
		}
		used += n + int(length)
	}
}

// frame applies one complete control frame.
func (p *controlParser) frame(typ uint64, payload []byte) error {
	switch typ {
	case frameSettings:
		ps, err := parseSettings(payload)
		if err != nil {
			return err
		}
		p.sawSettings, p.settings = true, ps
	case frameGoAway:
		id, err := parseVarint(payload)
		if err != nil {
			return err
		}
		// §5.2: an endpoint "MUST NOT increase the value they send in the last
		// identifier" of a later GOAWAY; "Receiving a GOAWAY containing a
		// larger identifier than previously received MUST be treated as a
		// connection error of type H3_ID_ERROR."
		if p.sawGoAway && id > p.goAwayID {
			return connErr(ErrCodeID, "GOAWAY identifier increased")
		}
		p.sawGoAway, p.goAwayID = true, id
	case frameMaxPushID:
		id, err := parseVarint(payload)
		if err != nil {
			return err
		}
		// §7.2.7: "A MAX_PUSH_ID frame cannot reduce the maximum push ID;
		// receipt of a MAX_PUSH_ID frame that contains a smaller value than
		// previously received MUST be treated as a connection error of type
		// H3_ID_ERROR."
		if p.sawMaxPID && id < p.maxPushID {
			return connErr(ErrCodeID, "MAX_PUSH_ID reduced")
		}
		p.sawMaxPID, p.maxPushID = true, id
	case frameCancelPush:
		if _, err := parseVarint(payload); err != nil {
			return err
		}
		// §7.2.3: "If a server receives a CANCEL_PUSH frame for a push ID that
		// has not yet been mentioned by a PUSH_PROMISE frame, this MUST be
		// treated as a connection error of type H3_ID_ERROR." This server
		// never pushes.
		return connErr(ErrCodeID, "CANCEL_PUSH for a push never promised")
	}
	return nil
}

// parsePrefixInt reads a QPACK/HPACK prefixed integer whose prefix is the low
// n bits of buf[0] (RFC 9204 §4.1.1, RFC 7541 §5.1). consumed == 0 with a nil
// error means more bytes are needed.
func parsePrefixInt(buf []byte, n uint) (v uint64, consumed int, err error) {
	if len(buf) == 0 {
		return 0, 0, nil
	}
	mask := uint64(1)<<n - 1
	v = uint64(buf[0]) & mask
	if v < mask {
		return v, 1, nil
	}
	var shift uint
	for i := 1; i < len(buf); i++ {
		b := buf[i]
		if shift >= 62 {
			return 0, 0, connErr(ErrCodeQPACKDecompressionFailed, "prefixed integer too large")
		}
		v += uint64(b&0x7f) << shift
		shift += 7
		if b&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, nil
}

// encoderStreamParser consumes the client's QPACK encoder stream (RFC 9204
// §4.3). The server's dynamic table has capacity 0 (its SETTINGS say so), so
// the only valid instruction is Set Dynamic Table Capacity to 0.
type encoderStreamParser struct{}

func (encoderStreamParser) feed(buf []byte) (int, error) {
	used := 0
	for used < len(buf) {
		b := buf[used]
		if b&0xe0 != 0x20 {
			// §3.2.2, §4.3.2-4.3.4: an insert or a duplicate needs room in a
			// table whose capacity is 0; "the decoder MUST treat this as a
			// connection error of type QPACK_ENCODER_STREAM_ERROR".
			return used, connErr(ErrCodeQPACKEncoderStream, "dynamic table insert with capacity 0")
		}
		v, n, err := parsePrefixInt(buf[used:], 5)
		if err != nil {
			return used, connErr(ErrCodeQPACKEncoderStream, "bad prefixed integer")
		}
		if n == 0 {
			return used, nil
		}
		if v != 0 {
			// §4.3.1: "The decoder MUST treat a new dynamic table capacity
			// value that exceeds this limit as a connection error of type
			// QPACK_ENCODER_STREAM_ERROR."
			return used, connErr(ErrCodeQPACKEncoderStream, "dynamic table capacity above 0")
		}
		used += n
	}
	return used, nil
}

// decoderStreamParser consumes the client's QPACK decoder stream (RFC 9204
// §4.4). The server never references its dynamic table, so only Stream
// Cancellation is valid.
type decoderStreamParser struct{}

func (decoderStreamParser) feed(buf []byte) (int, error) {
	used := 0
	for used < len(buf) {
		b := buf[used]
		var prefix uint = 6
		if b&0x80 != 0 {
			prefix = 7
		}
		_, n, err := parsePrefixInt(buf[used:], prefix)
		if err != nil {
			return used, connErr(ErrCodeQPACKDecoderStream, "bad prefixed integer")
		}
		if n == 0 {
			return used, nil
		}
		switch {
		case b&0x80 != 0:
			// §4.4.1: a Section Acknowledgment for a stream without an
			// unacknowledged section that references the dynamic table "MUST
			// be treated as a connection error of type
			// QPACK_DECODER_STREAM_ERROR"; the server sends none.
			return used, connErr(ErrCodeQPACKDecoderStream, "Section Acknowledgment without a dynamic reference")
		case b&0xc0 == 0:
			// §4.4.3: an Insert Count Increment of 0, or past the entries
			// sent (none), is a QPACK_DECODER_STREAM_ERROR.
			return used, connErr(ErrCodeQPACKDecoderStream, "Insert Count Increment without inserts")
		}
		used += n // Stream Cancellation: nothing to release
	}
	return used, nil
}
