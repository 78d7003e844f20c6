// Package frame parses and appends HTTP/2 frames (RFC 9113 §4 and §6). It does no
// I/O and keeps no state: Parse reads one frame from a byte slice without copying,
// and the Append functions write frames onto the end of a byte slice.
//
// Life of a frame here: the connection (internal/h2) hands Parse the unread bytes the
// engine gave it. Parse reads the 9-byte header (§4.1), rejects a length above the
// advertised SETTINGS_MAX_FRAME_SIZE from the header alone (§4.2), waits for the
// whole payload (ErrNeedMore), then checks what §6 fixes per type — payload length,
// stream identifier zero or not, padding — and returns a Frame whose slices point
// into the input. Those slices are valid only as long as the input is; the caller
// copies what it keeps. Semantics that depend on connection state (stream states,
// flow-control windows, settings values) are the caller's.
//
// Errors are values of ConnError or StreamError carrying an ErrCode: the caller
// answers a ConnError with GOAWAY and a StreamError with RST_STREAM. On a
// StreamError, n still covers the whole frame, so the caller skips it and goes on.
package frame

import (
	"encoding/binary"
	"errors"
)

// HeaderLen is the length of the frame header (RFC 9113 §4.1).
const HeaderLen = 9

// Frame-size bounds of SETTINGS_MAX_FRAME_SIZE (RFC 9113 §6.5.2).
const (
	MinMaxFrameSize = 1 << 14
	MaxMaxFrameSize = 1<<24 - 1
)

// MaxWindow is the largest flow-control window (RFC 9113 §6.9.1).
const MaxWindow = 1<<31 - 1

// Type is a frame type (RFC 9113 §6).
type Type uint8

// Frame types of RFC 9113 §6.
const (
	TypeData         Type = 0x0
	TypeHeaders      Type = 0x1
	TypePriority     Type = 0x2
	TypeRSTStream    Type = 0x3
	TypeSettings     Type = 0x4
	TypePushPromise  Type = 0x5
	TypePing         Type = 0x6
	TypeGoAway       Type = 0x7
	TypeWindowUpdate Type = 0x8
	TypeContinuation Type = 0x9
)

var typeNames = [...]string{
	TypeData:         "DATA",
	TypeHeaders:      "HEADERS",
	TypePriority:     "PRIORITY",
	TypeRSTStream:    "RST_STREAM",
	TypeSettings:     "SETTINGS",
	TypePushPromise:  "PUSH_PROMISE",
	TypePing:         "PING",
	TypeGoAway:       "GOAWAY",
	TypeWindowUpdate: "WINDOW_UPDATE",
	TypeContinuation: "CONTINUATION",
}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "UNKNOWN"
}

// Flags are the frame flags; their meaning depends on the type.
type Flags uint8

// Frame flags (RFC 9113 §6).
const (
	FlagEndStream  Flags = 0x1  // DATA, HEADERS
	FlagAck        Flags = 0x1  // SETTINGS, PING
	FlagEndHeaders Flags = 0x4  // HEADERS, PUSH_PROMISE, CONTINUATION
	FlagPadded     Flags = 0x8  // DATA, HEADERS, PUSH_PROMISE
	FlagPriority   Flags = 0x20 // HEADERS
)

// Has reports whether all of v are set in f.
func (f Flags) Has(v Flags) bool { return f&v == v }

// Sentinel errors of this package, for callers to branch on.
var (
	// ErrNeedMore reports that buf holds less than one whole frame.
	ErrNeedMore = errors.New("frame: need more data")
)

// Priority is the priority information of a PRIORITY frame or a HEADERS frame with
// the PRIORITY flag (RFC 9113 §5.3.2, deprecated: parsed and ignored).
type Priority struct {
	StreamDep uint32
	Exclusive bool
	Weight    uint8 // wire value; the weight is Weight+1
}

// Frame is one parsed frame. Byte slices point into the buffer given to Parse and
// are valid only as long as that buffer.
type Frame struct {
	Length   uint32 // payload length
	Type     Type
	Flags    Flags
	StreamID uint32

	// Payload is the whole frame payload, padding included.
	Payload []byte
	// Data is the DATA payload, or the header block fragment of HEADERS,
	// PUSH_PROMISE and CONTINUATION, without padding and priority fields.
	Data []byte
	// Priority is set for PRIORITY, and for HEADERS when HasPriority.
	Priority    Priority
	HasPriority bool
	// ErrCode is set for RST_STREAM and GOAWAY.
	ErrCode ErrCode
	// LastStreamID is set for GOAWAY; Data then holds the debug data.
	LastStreamID uint32
	// Increment is set for WINDOW_UPDATE (it may be zero: the caller decides).
	Increment uint32
	// PromisedID is set for PUSH_PROMISE.
	PromisedID uint32
}

// EndStream reports the END_STREAM flag of DATA and HEADERS.
func (f *Frame) EndStream() bool {
	return (f.Type == TypeData || f.Type == TypeHeaders) && f.Flags.Has(FlagEndStream)
}

// EndHeaders reports the END_HEADERS flag of HEADERS, PUSH_PROMISE and CONTINUATION.
func (f *Frame) EndHeaders() bool {
	return (f.Type == TypeHeaders || f.Type == TypePushPromise || f.Type == TypeContinuation) &&
		f.Flags.Has(FlagEndHeaders)
}

// IsAck reports the ACK flag of SETTINGS and PING.
func (f *Frame) IsAck() bool {
	return (f.Type == TypeSettings || f.Type == TypePing) && f.Flags.Has(FlagAck)
}

// NumSettings is the number of parameters of a SETTINGS frame.
func (f *Frame) NumSettings() int { return len(f.Payload) / 6 }

// Setting returns the i-th parameter of a SETTINGS frame.
func (f *Frame) Setting(i int) Setting {
	p := f.Payload[i*6:]
	return Setting{ID: SettingID(binary.BigEndian.Uint16(p)), Val: binary.BigEndian.Uint32(p[2:])}
}

// PingData returns the opaque data of a PING frame.
func (f *Frame) PingData() (d [8]byte) {
	copy(d[:], f.Payload)
	return d
}

// ParseHeader reads the frame header at the start of buf, which must hold at least
// HeaderLen bytes.
func ParseHeader(buf []byte) (length uint32, t Type, flags Flags, streamID uint32) {
	_ = buf[8]
	length = uint32(buf[0])<<16 | uint32(buf[1])<<8 | uint32(buf[2])
	// RFC 9113 §4.1: the reserved bit is ignored on receipt.
	return length, Type(buf[3]), Flags(buf[4]), binary.BigEndian.Uint32(buf[5:]) & (1<<31 - 1)
}

// Parse reads one frame from the start of buf. maxFrameSize is the
// SETTINGS_MAX_FRAME_SIZE this side advertised.
//
// It returns ErrNeedMore (n == 0) when buf holds less than a whole frame — unless
// the header alone already shows an error: a length above maxFrameSize is a
// FRAME_SIZE_ERROR ConnError (RFC 9113 §4.2) decided from the first 9 bytes.
// On a StreamError n is the whole frame length, on a ConnError n is 0.
// The returned slices alias buf.
func Parse(buf []byte, maxFrameSize uint32) (f Frame, n int, err error) {
	if len(buf) < HeaderLen {
		return f, 0, ErrNeedMore
	}
	f.Length, f.Type, f.Flags, f.StreamID = ParseHeader(buf)
	if f.Length > maxFrameSize {
		// RFC 9113 §4.2: a frame exceeding SETTINGS_MAX_FRAME_SIZE is a FRAME_SIZE_ERROR;
		// decided before waiting for the payload so a peer cannot make us buffer it.
		return f, 0, ConnError{Code: ErrCodeFrameSize, Reason: "frame larger than SETTINGS_MAX_FRAME_SIZE"}
	}
	n = HeaderLen + int(f.Length)
	if len(buf) < n {
		return f, 0, ErrNeedMore
	}
	f.Payload = buf[HeaderLen:n:n]
	if err = f.check(); err != nil {
		if _, ok := err.(StreamError); ok {
			return f, n, err
		}
		return f, 0, err
	}
	return f, n, nil
}

func connErr(code ErrCode, reason string) error { return ConnError{Code: code, Reason: reason} }

// check validates f against RFC 9113 §6 and fills its type-specific fields.
func (f *Frame) check() error {
	p := f.Payload
	switch f.Type {
	case TypeData:
		// §6.1: DATA on stream 0 is a PROTOCOL_ERROR.
		if f.StreamID == 0 {
			return connErr(ErrCodeProtocol, "DATA on stream 0")
		}
		d, err := f.unpad(p)
		f.Data = d
		return err
	case TypeHeaders:
		// §6.2: HEADERS on stream 0 is a PROTOCOL_ERROR.
		if f.StreamID == 0 {
			return connErr(ErrCodeProtocol, "HEADERS on stream 0")
		}
		d, err := f.unpad(p)
		if err != nil {
			return err
		}
		if f.Flags.Has(FlagPriority) {
			if len(d) < 5 {
				if f.Flags.Has(FlagPadded) {
					return connErr(ErrCodeProtocol, "padding exceeds payload")
				}
				return connErr(ErrCodeFrameSize, "HEADERS too short for priority")
			}
			f.HasPriority = true
			f.Priority = parsePriority(d)
			d = d[5:]
		}
		f.Data = d
	case TypePriority:
		// §6.3: stream 0 is a PROTOCOL_ERROR; a length other than 5 a stream error
		// FRAME_SIZE_ERROR.
		if f.StreamID == 0 {
			return connErr(ErrCodeProtocol, "PRIORITY on stream 0")
		}
		if len(p) != 5 {
			return StreamError{StreamID: f.StreamID, Code: ErrCodeFrameSize, Reason: "PRIORITY length not 5"}
		}
		f.HasPriority = true
		f.Priority = parsePriority(p)
	case TypeRSTStream:
		// §6.4: length other than 4 is a FRAME_SIZE_ERROR, stream 0 a PROTOCOL_ERROR.
		if len(p) != 4 {
			return connErr(ErrCodeFrameSize, "RST_STREAM length not 4")
		}
		if f.StreamID == 0 {
			return connErr(ErrCodeProtocol, "RST_STREAM on stream 0")
		}
		f.ErrCode = ErrCode(binary.BigEndian.Uint32(p))
	case TypeSettings:
		// §6.5: stream must be 0; ACK carries nothing; otherwise a multiple of 6.
		if f.StreamID != 0 {
			return connErr(ErrCodeProtocol, "SETTINGS on a stream")
		}
		if f.Flags.Has(FlagAck) && len(p) != 0 {
			return connErr(ErrCodeFrameSize, "SETTINGS ACK with payload")
		}
		if len(p)%6 != 0 {
			return connErr(ErrCodeFrameSize, "SETTINGS length not a multiple of 6")
		}
	case TypePushPromise:
		// §6.6: stream 0 is a PROTOCOL_ERROR.
		if f.StreamID == 0 {
			return connErr(ErrCodeProtocol, "PUSH_PROMISE on stream 0")
		}
		d, err := f.unpad(p)
		if err != nil {
			return err
		}
		if len(d) < 4 {
			return connErr(ErrCodeFrameSize, "PUSH_PROMISE too short")
		}
		f.PromisedID = binary.BigEndian.Uint32(d) & (1<<31 - 1)
		f.Data = d[4:]
	case TypePing:
		// §6.7: length other than 8 is a FRAME_SIZE_ERROR, a stream a PROTOCOL_ERROR.
		if len(p) != 8 {
			return connErr(ErrCodeFrameSize, "PING length not 8")
		}
		if f.StreamID != 0 {
			return connErr(ErrCodeProtocol, "PING on a stream")
		}
	case TypeGoAway:
		// §6.8: stream must be 0; at least last-stream-id and error code.
		if f.StreamID != 0 {
			return connErr(ErrCodeProtocol, "GOAWAY on a stream")
		}
		if len(p) < 8 {
			return connErr(ErrCodeFrameSize, "GOAWAY too short")
		}
		f.LastStreamID = binary.BigEndian.Uint32(p) & (1<<31 - 1)
		f.ErrCode = ErrCode(binary.BigEndian.Uint32(p[4:]))
		f.Data = p[8:]
	case TypeWindowUpdate:
		// §6.9: a length other than 4 is a FRAME_SIZE_ERROR.
		if len(p) != 4 {
			return connErr(ErrCodeFrameSize, "WINDOW_UPDATE length not 4")
		}
		f.Increment = binary.BigEndian.Uint32(p) & (1<<31 - 1)
	case TypeContinuation:
		// §6.10: stream 0 is a PROTOCOL_ERROR.
		if f.StreamID == 0 {
			return connErr(ErrCodeProtocol, "CONTINUATION on stream 0")
		}
		f.Data = p
	default:
		// §5.5: unknown frame types are ignored; the caller skips them.
	}
	return nil
}

// unpad strips the padding of DATA, HEADERS and PUSH_PROMISE.
func (f *Frame) unpad(p []byte) ([]byte, error) {
	if !f.Flags.Has(FlagPadded) {
		return p, nil
	}
	if len(p) == 0 {
		return nil, connErr(ErrCodeFrameSize, "padded frame without pad length")
	}
	pad := int(p[0])
	p = p[1:]
	// §6.1, §6.2: padding as long as the rest of the payload or longer is a
	// PROTOCOL_ERROR.
	if pad > len(p) {
		return nil, connErr(ErrCodeProtocol, "padding exceeds payload")
	}
	return p[:len(p)-pad], nil
}

func parsePriority(p []byte) Priority {
	v := binary.BigEndian.Uint32(p)
	return Priority{StreamDep: v & (1<<31 - 1), Exclusive: v>>31 == 1, Weight: p[4]}
}
