package frame

import "strconv"

// SettingID identifies a SETTINGS parameter (RFC 9113 §6.5.2).
type SettingID uint16

// Settings parameters of RFC 9113 §6.5.2.
const (
	SettingHeaderTableSize      SettingID = 0x1
	SettingEnablePush           SettingID = 0x2
	SettingMaxConcurrentStreams SettingID = 0x3
	SettingInitialWindowSize    SettingID = 0x4
	SettingMaxFrameSize         SettingID = 0x5
	SettingMaxHeaderListSize    SettingID = 0x6
	// SettingEnableConnectProtocol lets a client send extended CONNECT requests
	// (RFC 8441 §3: WebSocket over HTTP/2).
	SettingEnableConnectProtocol SettingID = 0x8
)

func (s SettingID) String() string {
	switch s {
	case SettingHeaderTableSize:
		return "HEADER_TABLE_SIZE"
	case SettingEnablePush:
		return "ENABLE_PUSH"
	case SettingMaxConcurrentStreams:
		return "MAX_CONCURRENT_STREAMS"
	case SettingInitialWindowSize:
		return "INITIAL_WINDOW_SIZE"
	case SettingMaxFrameSize:
		return "MAX_FRAME_SIZE"
	case SettingMaxHeaderListSize:
		return "MAX_HEADER_LIST_SIZE"
	case SettingEnableConnectProtocol:
		return "ENABLE_CONNECT_PROTOCOL"
	}
	return "UNKNOWN_SETTING_" + strconv.Itoa(int(s))
}

// Setting is one SETTINGS parameter.
type Setting struct {
	ID  SettingID
	Val uint32
}

// Valid checks the value ranges of RFC 9113 §6.5.2; unknown identifiers are valid
// (they are ignored, §6.5.2).
func (s Setting) Valid() error {
	switch s.ID {
	case SettingEnablePush:
		if s.Val > 1 {
			return ConnError{Code: ErrCodeProtocol, Reason: "SETTINGS_ENABLE_PUSH not 0 or 1"}
		}
	case SettingEnableConnectProtocol:
		if s.Val > 1 {
			// RFC 8441 §3.
			return ConnError{Code: ErrCodeProtocol, Reason: "SETTINGS_ENABLE_CONNECT_PROTOCOL not 0 or 1"}
		}
	case SettingInitialWindowSize:
		if s.Val > MaxWindow {
			return ConnError{Code: ErrCodeFlowControl, Reason: "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1"}
		}
	case SettingMaxFrameSize:
		if s.Val < MinMaxFrameSize || s.Val > MaxMaxFrameSize {
			return ConnError{Code: ErrCodeProtocol, Reason: "SETTINGS_MAX_FRAME_SIZE out of range"}
		}
	}
	return nil
}
