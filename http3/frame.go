package celerish3

import (
	"io"

	"github.com/quic-go/quic-go/quicvarint"
)

// Frame types (RFC 9114 §7.2, §11.2.1).
const (
	frameData        = 0x00
	frameHeaders     = 0x01
	frameCancelPush  = 0x03
	frameSettings    = 0x04
	framePushPromise = 0x05
	frameGoAway      = 0x07
	frameMaxPushID   = 0x0d
)

// isH2FrameType reports whether typ is an HTTP/2 frame type that HTTP/3 reserves
// (PRIORITY, PING, WINDOW_UPDATE, CONTINUATION): RFC 9114 §7.2.8, "receipt of
// these frames MUST be treated as a connection error of type
// H3_FRAME_UNEXPECTED".
func isH2FrameType(typ uint64) bool {
	return typ == 0x02 || typ == 0x06 || typ == 0x08 || typ == 0x09
}

// isReservedType reports whether typ is a reserved ("greasing") frame, stream
// or setting type, 0x1f * N + 0x21 (RFC 9114 §7.2.8, §6.2.3, §7.2.4.1).
func isReservedType(typ uint64) bool {
	return typ >= 0x21 && (typ-0x21)%0x1f == 0
}

// parseFrameHeader reads a frame's type and length from the start of buf
// (RFC 9114 §7.1). n == 0 with a nil error means buf holds no complete header
// yet: more bytes are needed. It never fails otherwise: every pair of varints
// is a header; what the type allows is the caller's rule.
func parseFrameHeader(buf []byte) (typ, length uint64, n int) {
	typ, n1, err := quicvarint.Parse(buf)
	if err != nil {
		return 0, 0, 0
	}
	length, n2, err := quicvarint.Parse(buf[n1:])
	if err != nil {
		return 0, 0, 0
	}
	return typ, length, n1 + n2
}

// appendFrameHeader appends a frame header of type typ and payload length.
func appendFrameHeader(dst []byte, typ, length uint64) []byte {
	return quicvarint.Append(quicvarint.Append(dst, typ), length)
}

// parseVarint reads one varint that must fill payload exactly (a GOAWAY,
// MAX_PUSH_ID or CANCEL_PUSH frame): RFC 9114 §7.1, a payload with more or
// fewer bytes than its fields is an H3_FRAME_ERROR.
func parseVarint(payload []byte) (uint64, error) {
	v, n, err := quicvarint.Parse(payload)
	if err != nil || n != len(payload) {
		return 0, connErr(ErrCodeFrame, "frame payload is not exactly one varint")
	}
	return v, nil
}

// requestFrameRule says what a frame of type typ means on a request stream
// (RFC 9114 §4.1, §7.2), given whether the header section (sawHeaders) and the
// trailer section (sawTrailers) have arrived. It returns nil for DATA and
// HEADERS that are in order, and for the types to skip (reserved and unknown
// ones, §9: "implementations MUST ignore unknown or unsupported values"); skip
// reports those.
func requestFrameRule(typ uint64, sawHeaders, sawTrailers bool) (skip bool, err error) {
	switch {
	case typ == frameHeaders:
		if sawTrailers {
			// §4.1: a HEADERS frame after the trailer section is an invalid
			// sequence of frames.
			return false, connErr(ErrCodeFrameUnexpected, "HEADERS after the trailer section")
		}
		return false, nil
	case typ == frameData:
		if !sawHeaders {
			// §4.1: "Receipt of an invalid sequence of frames MUST be treated
			// as a connection error of type H3_FRAME_UNEXPECTED"; DATA before
			// HEADERS is one.
			return false, connErr(ErrCodeFrameUnexpected, "DATA before HEADERS")
		}
		if sawTrailers {
			return false, connErr(ErrCodeFrameUnexpected, "DATA after the trailer section")
		}
		return false, nil
	case typ == frameCancelPush, typ == frameSettings, typ == frameGoAway, typ == frameMaxPushID:
		// §7.2.3, §7.2.4, §7.2.6, §7.2.7: control frames on a request stream
		// are H3_FRAME_UNEXPECTED.
		return false, connErr(ErrCodeFrameUnexpected, "control frame on a request stream")
	case typ == framePushPromise:
		// §7.2.5: "A client MUST NOT send a PUSH_PROMISE frame. A server MUST
		// treat the receipt of a PUSH_PROMISE frame as a connection error of
		// type H3_FRAME_UNEXPECTED."
		return false, connErr(ErrCodeFrameUnexpected, "PUSH_PROMISE from a client")
	case isH2FrameType(typ):
		return false, connErr(ErrCodeFrameUnexpected, "HTTP/2 frame type")
	}
	return true, nil
}

// controlFrameRule is requestFrameRule for the peer's control stream (RFC 9114
// §6.2.1, §7.2), after its first frame (which must be SETTINGS, see
// controlParser).
func controlFrameRule(typ uint64) (skip bool, err error) {
	switch {
	case typ == frameData, typ == frameHeaders, typ == framePushPromise:
		// §7.2.1, §7.2.2, §7.2.5: on a control stream these are
		// H3_FRAME_UNEXPECTED.
		return false, connErr(ErrCodeFrameUnexpected, "request frame on the control stream")
	case typ == frameSettings:
		// §7.2.4: "If an endpoint receives a second SETTINGS frame on the
		// control stream, the endpoint MUST respond with a connection error of
		// type H3_FRAME_UNEXPECTED."
		return false, connErr(ErrCodeFrameUnexpected, "second SETTINGS frame")
	case typ == frameCancelPush, typ == frameGoAway, typ == frameMaxPushID:
		return false, nil
	case isH2FrameType(typ):
		return false, connErr(ErrCodeFrameUnexpected, "HTTP/2 frame type")
	}
	return true, nil
}

// errTruncated reports a stream that ended inside a frame: RFC 9114 §7.1,
// "When a stream terminates cleanly, if the last frame on the stream was
// truncated, this MUST be treated as a connection error of type
// H3_FRAME_ERROR."
var errTruncated = connErr(ErrCodeFrame, "stream ended inside a frame")

// truncated maps a clean end of stream inside a frame to errTruncated.
func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errTruncated
	}
	return err
}
