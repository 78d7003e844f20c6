package frame

import "strconv"

// ErrCode is an HTTP/2 error code (RFC 9113 §7), carried by RST_STREAM and GOAWAY.
type ErrCode uint32

// Error codes of RFC 9113 §7.
const (
	ErrCodeNo                 ErrCode = 0x0
	ErrCodeProtocol           ErrCode = 0x1
	ErrCodeInternal           ErrCode = 0x2
	ErrCodeFlowControl        ErrCode = 0x3
	ErrCodeSettingsTimeout    ErrCode = 0x4
	ErrCodeStreamClosed       ErrCode = 0x5
	ErrCodeFrameSize          ErrCode = 0x6
	ErrCodeRefusedStream      ErrCode = 0x7
	ErrCodeCancel             ErrCode = 0x8
	ErrCodeCompression        ErrCode = 0x9
	ErrCodeConnect            ErrCode = 0xa
	ErrCodeEnhanceYourCalm    ErrCode = 0xb
	ErrCodeInadequateSecurity ErrCode = 0xc
	ErrCodeHTTP11Required     ErrCode = 0xd
)

var errCodeNames = [...]string{
	ErrCodeNo:                 "NO_ERROR",
	ErrCodeProtocol:           "PROTOCOL_ERROR",
	ErrCodeInternal:           "INTERNAL_ERROR",
	ErrCodeFlowControl:        "FLOW_CONTROL_ERROR",
	ErrCodeSettingsTimeout:    "SETTINGS_TIMEOUT",
	ErrCodeStreamClosed:       "STREAM_CLOSED",
	ErrCodeFrameSize:          "FRAME_SIZE_ERROR",
	ErrCodeRefusedStream:      "REFUSED_STREAM",
	ErrCodeCancel:             "CANCEL",
	ErrCodeCompression:        "COMPRESSION_ERROR",
	ErrCodeConnect:            "CONNECT_ERROR",
	ErrCodeEnhanceYourCalm:    "ENHANCE_YOUR_CALM",
	ErrCodeInadequateSecurity: "INADEQUATE_SECURITY",
	ErrCodeHTTP11Required:     "HTTP_1_1_REQUIRED",
}

// String returns the RFC name of the code, or "unknown error code 0x.." for codes
// outside §7 (which a receiver treats as INTERNAL_ERROR-like, never as a failure).
func (e ErrCode) String() string {
	if int(e) < len(errCodeNames) {
		return errCodeNames[e]
	}
	return "unknown error code 0x" + strconv.FormatUint(uint64(e), 16)
}

// ConnError is a connection error (RFC 9113 §5.4.1): the endpoint sends GOAWAY with
// Code and closes the connection.
type ConnError struct {
	Code   ErrCode
	Reason string // static text for logs and the GOAWAY debug data
}

func (e ConnError) Error() string { return "h2: connection error " + e.Code.String() + ": " + e.Reason }

// StreamError is a stream error (RFC 9113 §5.4.2): the endpoint sends RST_STREAM with
// Code on StreamID; the connection stays up.
type StreamError struct {
	StreamID uint32
	Code     ErrCode
	Reason   string // static text for logs
}

func (e StreamError) Error() string {
	return "h2: stream error on " + strconv.FormatUint(uint64(e.StreamID), 10) + " " + e.Code.String() + ": " + e.Reason
}
