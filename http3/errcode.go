package celerish3

import (
	"errors"
	"strconv"
)

// ErrCode is an HTTP/3 application error code (RFC 9114 §8.1, RFC 9204 §6),
// carried by CONNECTION_CLOSE, RESET_STREAM and STOP_SENDING.
type ErrCode uint64

// HTTP/3 and QPACK error codes.
const (
	ErrCodeNoError              ErrCode = 0x100
	ErrCodeGeneralProtocol      ErrCode = 0x101
	ErrCodeInternal             ErrCode = 0x102
	ErrCodeStreamCreation       ErrCode = 0x103
	ErrCodeClosedCriticalStream ErrCode = 0x104
	ErrCodeFrameUnexpected      ErrCode = 0x105
	ErrCodeFrame                ErrCode = 0x106
	ErrCodeExcessiveLoad        ErrCode = 0x107
	ErrCodeID                   ErrCode = 0x108
	ErrCodeSettings             ErrCode = 0x109
	ErrCodeMissingSettings      ErrCode = 0x10a
	ErrCodeRequestRejected      ErrCode = 0x10b
	ErrCodeRequestCancelled     ErrCode = 0x10c
	ErrCodeRequestIncomplete    ErrCode = 0x10d
	ErrCodeMessage              ErrCode = 0x10e
	ErrCodeConnect              ErrCode = 0x10f
	ErrCodeVersionFallback      ErrCode = 0x110

	ErrCodeQPACKDecompressionFailed ErrCode = 0x200
	ErrCodeQPACKEncoderStream       ErrCode = 0x201
	ErrCodeQPACKDecoderStream       ErrCode = 0x202
)

var errCodeNames = map[ErrCode]string{
	ErrCodeNoError:                  "H3_NO_ERROR",
	ErrCodeGeneralProtocol:          "H3_GENERAL_PROTOCOL_ERROR",
	ErrCodeInternal:                 "H3_INTERNAL_ERROR",
	ErrCodeStreamCreation:           "H3_STREAM_CREATION_ERROR",
	ErrCodeClosedCriticalStream:     "H3_CLOSED_CRITICAL_STREAM",
	ErrCodeFrameUnexpected:          "H3_FRAME_UNEXPECTED",
	ErrCodeFrame:                    "H3_FRAME_ERROR",
	ErrCodeExcessiveLoad:            "H3_EXCESSIVE_LOAD",
	ErrCodeID:                       "H3_ID_ERROR",
	ErrCodeSettings:                 "H3_SETTINGS_ERROR",
	ErrCodeMissingSettings:          "H3_MISSING_SETTINGS",
	ErrCodeRequestRejected:          "H3_REQUEST_REJECTED",
	ErrCodeRequestCancelled:         "H3_REQUEST_CANCELLED",
	ErrCodeRequestIncomplete:        "H3_REQUEST_INCOMPLETE",
	ErrCodeMessage:                  "H3_MESSAGE_ERROR",
	ErrCodeConnect:                  "H3_CONNECT_ERROR",
	ErrCodeVersionFallback:          "H3_VERSION_FALLBACK",
	ErrCodeQPACKDecompressionFailed: "QPACK_DECOMPRESSION_FAILED",
	ErrCodeQPACKEncoderStream:       "QPACK_ENCODER_STREAM_ERROR",
	ErrCodeQPACKDecoderStream:       "QPACK_DECODER_STREAM_ERROR",
}

func (c ErrCode) String() string {
	if s, ok := errCodeNames[c]; ok {
		return s
	}
	return "H3_ERROR_0x" + strconv.FormatUint(uint64(c), 16)
}

// connError is a connection error (RFC 9114 §8): the connection closes with
// Code.
type connError struct {
	Code   ErrCode
	Reason string
}

func (e *connError) Error() string {
	return "http3: connection error " + e.Code.String() + ": " + e.Reason
}

// streamError is a stream error (RFC 9114 §8): the request stream is reset
// with Code; the connection goes on.
type streamError struct {
	Code   ErrCode
	Reason string
}

func (e *streamError) Error() string {
	return "http3: stream error " + e.Code.String() + ": " + e.Reason
}

func connErr(code ErrCode, reason string) error   { return &connError{Code: code, Reason: reason} }
func streamErr(code ErrCode, reason string) error { return &streamError{Code: code, Reason: reason} }

// codeOf returns the error code of a connError or streamError, and whether err
// is a connection error.
func codeOf(err error) (code ErrCode, conn bool, ok bool) {
	if ce, isConn := errors.AsType[*connError](err); isConn {
		return ce.Code, true, true
	}
	if se, isStream := errors.AsType[*streamError](err); isStream {
		return se.Code, false, true
	}
	return 0, false, false
}
