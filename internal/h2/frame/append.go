package frame

import "encoding/binary"

// AppendHeader appends a frame header. length must fit in 24 bits.
func AppendHeader(dst []byte, length int, t Type, flags Flags, streamID uint32) []byte {
	return append(dst, byte(length>>16), byte(length>>8), byte(length), byte(t), byte(flags),
		byte(streamID>>24)&0x7f, byte(streamID>>16), byte(streamID>>8), byte(streamID))
}

// AppendRaw appends a frame of any type with the given payload, unchecked (for
// tests and extension frames).
func AppendRaw(dst []byte, t Type, flags Flags, streamID uint32, payload []byte) []byte {
	dst = AppendHeader(dst, len(payload), t, flags, streamID)
	return append(dst, payload...)
}

// AppendData appends a DATA frame (RFC 9113 §6.1) carrying data, which must not
// exceed the peer's SETTINGS_MAX_FRAME_SIZE.
func AppendData(dst []byte, streamID uint32, endStream bool, data []byte) []byte {
	var fl Flags
	if endStream {
		fl = FlagEndStream
	}
	dst = AppendHeader(dst, len(data), TypeData, fl, streamID)
	return append(dst, data...)
}

// AppendDataPadded appends a padded DATA frame with pad zero bytes of padding.
func AppendDataPadded(dst []byte, streamID uint32, endStream bool, data []byte, pad uint8) []byte {
	fl := FlagPadded
	if endStream {
		fl |= FlagEndStream
	}
	dst = AppendHeader(dst, 1+len(data)+int(pad), TypeData, fl, streamID)
	dst = append(dst, pad)
	dst = append(dst, data...)
	for range pad {
		dst = append(dst, 0)
	}
	return dst
}

// AppendHeaders appends a HEADERS frame (RFC 9113 §6.2) carrying the header block
// fragment block.
func AppendHeaders(dst []byte, streamID uint32, endStream, endHeaders bool, block []byte) []byte {
	var fl Flags
	if endStream {
		fl |= FlagEndStream
	}
	if endHeaders {
		fl |= FlagEndHeaders
	}
	dst = AppendHeader(dst, len(block), TypeHeaders, fl, streamID)
	return append(dst, block...)
}

// AppendHeadersPriority appends a HEADERS frame with the PRIORITY flag.
func AppendHeadersPriority(dst []byte, streamID uint32, endStream, endHeaders bool, p Priority, block []byte) []byte {
	fl := FlagPriority
	if endStream {
		fl |= FlagEndStream
	}
	if endHeaders {
		fl |= FlagEndHeaders
	}
	dst = AppendHeader(dst, 5+len(block), TypeHeaders, fl, streamID)
	dst = appendPriority(dst, p)
	return append(dst, block...)
}

// AppendContinuation appends a CONTINUATION frame (RFC 9113 §6.10).
func AppendContinuation(dst []byte, streamID uint32, endHeaders bool, block []byte) []byte {
	var fl Flags
	if endHeaders {
		fl = FlagEndHeaders
	}
	dst = AppendHeader(dst, len(block), TypeContinuation, fl, streamID)
	return append(dst, block...)
}

// AppendPriority appends a PRIORITY frame (RFC 9113 §6.3).
func AppendPriority(dst []byte, streamID uint32, p Priority) []byte {
	dst = AppendHeader(dst, 5, TypePriority, 0, streamID)
	return appendPriority(dst, p)
}

func appendPriority(dst []byte, p Priority) []byte {
	v := p.StreamDep & (1<<31 - 1)
	if p.Exclusive {
		v |= 1 << 31
	}
	dst = binary.BigEndian.AppendUint32(dst, v)
	return append(dst, p.Weight)
}

// AppendRSTStream appends a RST_STREAM frame (RFC 9113 §6.4).
func AppendRSTStream(dst []byte, streamID uint32, code ErrCode) []byte {
	dst = AppendHeader(dst, 4, TypeRSTStream, 0, streamID)
	return binary.BigEndian.AppendUint32(dst, uint32(code))
}

// AppendSettings appends a SETTINGS frame (RFC 9113 §6.5) with the given parameters.
func AppendSettings(dst []byte, settings ...Setting) []byte {
	dst = AppendHeader(dst, 6*len(settings), TypeSettings, 0, 0)
	for _, s := range settings {
		dst = binary.BigEndian.AppendUint16(dst, uint16(s.ID))
		dst = binary.BigEndian.AppendUint32(dst, s.Val)
	}
	return dst
}

// AppendSettingsAck appends an empty SETTINGS frame with the ACK flag.
func AppendSettingsAck(dst []byte) []byte {
	return AppendHeader(dst, 0, TypeSettings, FlagAck, 0)
}

// AppendPushPromise appends a PUSH_PROMISE frame (RFC 9113 §6.6). A server never
// receives one; clients in tests send it.
func AppendPushPromise(dst []byte, streamID, promisedID uint32, endHeaders bool, block []byte) []byte {
	var fl Flags
	if endHeaders {
		fl = FlagEndHeaders
	}
	dst = AppendHeader(dst, 4+len(block), TypePushPromise, fl, streamID)
	dst = binary.BigEndian.AppendUint32(dst, promisedID&(1<<31-1))
	return append(dst, block...)
}

// AppendPing appends a PING frame (RFC 9113 §6.7).
func AppendPing(dst []byte, ack bool, data [8]byte) []byte {
	var fl Flags
	if ack {
		fl = FlagAck
	}
	dst = AppendHeader(dst, 8, TypePing, fl, 0)
	return append(dst, data[:]...)
}

// AppendGoAway appends a GOAWAY frame (RFC 9113 §6.8).
func AppendGoAway(dst []byte, lastStreamID uint32, code ErrCode, debug []byte) []byte {
	dst = AppendHeader(dst, 8+len(debug), TypeGoAway, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, lastStreamID&(1<<31-1))
	dst = binary.BigEndian.AppendUint32(dst, uint32(code))
	return append(dst, debug...)
}

// AppendWindowUpdate appends a WINDOW_UPDATE frame (RFC 9113 §6.9).
func AppendWindowUpdate(dst []byte, streamID, increment uint32) []byte {
	dst = AppendHeader(dst, 4, TypeWindowUpdate, 0, streamID)
	return binary.BigEndian.AppendUint32(dst, increment&(1<<31-1))
}
