package ws

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
)

// Close status codes (RFC 6455 §7.4.1).
const (
	CloseNormal          = 1000
	CloseGoingAway       = 1001
	CloseProtocolError   = 1002
	CloseUnsupportedData = 1003
	CloseNoStatus        = 1005 // never sent: "no status code was present"
	CloseAbnormal        = 1006 // never sent: "closed without a close frame"
	CloseInvalidPayload  = 1007
	ClosePolicyViolation = 1008
	CloseMessageTooBig   = 1009
	CloseMandatoryExt    = 1010
	CloseInternalError   = 1011
	CloseServiceRestart  = 1012
	CloseTryAgainLater   = 1013
	CloseBadGateway      = 1014
	CloseTLSHandshake    = 1015 // never sent
)

// ValidCloseCode reports whether code may appear in a close frame (RFC 6455
// §7.4.1, §7.4.2 and the IANA registry): 1000-1003, 1007-1014, and 3000-4999.
// 1004, 1005, 1006 and 1015 are reserved or never sent.
func ValidCloseCode(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// ParseClose reads a close frame's payload: no code (CloseNoStatus) when empty,
// else a valid code and a UTF-8 reason. RFC 6455 §5.5.1.
func ParseClose(p []byte) (code int, reason []byte, err error) {
	switch len(p) {
	case 0:
		return CloseNoStatus, nil, nil
	case 1:
		return 0, nil, ErrClosePayload
	}
	code = int(binary.BigEndian.Uint16(p))
	if !ValidCloseCode(code) {
		return 0, nil, ErrBadCloseCode
	}
	reason = p[2:]
	if !ValidUTF8(reason) {
		return 0, nil, ErrBadUTF8
	}
	return code, reason, nil
}

// AppendClose appends an unmasked close frame with code and reason (the reason is
// cut to fit the 125-byte control payload, at a rune boundary).
func AppendClose(dst []byte, code int, reason string) []byte {
	if code == CloseNoStatus {
		return AppendFrame(dst, true, OpClose, nil)
	}
	if len(reason) > 123 {
		reason = reason[:123]
		for len(reason) > 0 && !ValidUTF8([]byte(reason)) {
			reason = reason[:len(reason)-1]
		}
	}
	dst = AppendHeader(dst, true, false, OpClose, 2+len(reason), false, [4]byte{})
	dst = binary.BigEndian.AppendUint16(dst, uint16(code))
	return append(dst, reason...)
}

// CloseCodeFor is the close code a server sends for a codec error: 1007 for bad
// UTF-8, 1009 for a message too big, 1002 for every other protocol violation.
func CloseCodeFor(err error) int {
	switch {
	case errors.Is(err, ErrBadUTF8):
		return CloseInvalidPayload
	case errors.Is(err, ErrMessageTooBig):
		return CloseMessageTooBig
	}
	return CloseProtocolError
}

// acceptGUID is RFC 6455 §1.3's GUID.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// AcceptKey is the Sec-WebSocket-Accept value for a Sec-WebSocket-Key (RFC 6455
// §4.2.2 item 5.4): base64(SHA-1(key + GUID)).
func AcceptKey(key string) string {
	h := sha1.New()
	h.Write([]byte(key))
	h.Write([]byte(acceptGUID))
	var sum [sha1.Size]byte
	return base64.StdEncoding.EncodeToString(h.Sum(sum[:0]))
}

// ValidKey reports whether a Sec-WebSocket-Key is a base64 encoding of 16 bytes
// (RFC 6455 §4.1 item 7, §4.2.1 item 5).
func ValidKey(key string) bool {
	if len(key) != 24 || key[22] != '=' || key[23] != '=' {
		return false
	}
	var dst [18]byte
	n, err := base64.StdEncoding.Decode(dst[:], []byte(key))
	return err == nil && n == 16
}
