package celerish3

import "github.com/quic-go/quic-go/quicvarint"

// Setting identifiers (RFC 9114 §7.2.4.1, RFC 9204 §5, RFC 9220 §3, RFC 9297 §2.1.1).
const (
	settingQPACKMaxTableCapacity = 0x01
	settingMaxFieldSectionSize   = 0x06
	settingQPACKBlockedStreams   = 0x07
	settingEnableConnectProtocol = 0x08
	settingH3Datagram            = 0x33
)

// peerSettings are the values of the peer's SETTINGS frame that the server
// uses. Settings not received keep their defaults (RFC 9114 §7.2.4.2).
type peerSettings struct {
	maxFieldSectionSize uint64 // 0: unlimited (the default)
	qpackMaxTable       uint64
	qpackBlocked        uint64
}

// parseSettings parses a SETTINGS frame's payload (RFC 9114 §7.2.4).
func parseSettings(payload []byte) (peerSettings, error) {
	var ps peerSettings
	var seen [8]uint64 // known identifiers seen, to catch duplicates
	nseen := 0
	for len(payload) > 0 {
		id, n, err := quicvarint.Parse(payload)
		if err != nil {
			return ps, connErr(ErrCodeFrame, "truncated SETTINGS frame")
		}
		payload = payload[n:]
		val, n, err := quicvarint.Parse(payload)
		if err != nil {
			return ps, connErr(ErrCodeFrame, "truncated SETTINGS frame")
		}
		payload = payload[n:]
		if id >= 0x02 && id <= 0x05 {
			// §7.2.4.1: HTTP/2 settings without an HTTP/3 equivalent are
			// reserved; "their receipt MUST be treated as a connection error
			// of type H3_SETTINGS_ERROR".
			return ps, connErr(ErrCodeSettings, "HTTP/2 setting in SETTINGS")
		}
		switch id {
		case settingQPACKMaxTableCapacity, settingMaxFieldSectionSize, settingQPACKBlockedStreams,
			settingEnableConnectProtocol, settingH3Datagram:
			for _, s := range seen[:nseen] {
				if s == id {
					// §7.2.4: "The same setting identifier MUST NOT occur more
					// than once in the SETTINGS frame. A receiver MAY treat the
					// presence of duplicate setting identifiers as a connection
					// error of type H3_SETTINGS_ERROR."
					return ps, connErr(ErrCodeSettings, "duplicate setting")
				}
			}
			seen[nseen] = id
			nseen++
		default:
			continue // §7.2.4.1, §9: unknown and reserved settings are ignored
		}
		switch id {
		case settingQPACKMaxTableCapacity:
			ps.qpackMaxTable = val
		case settingMaxFieldSectionSize:
			ps.maxFieldSectionSize = val
		case settingQPACKBlockedStreams:
			ps.qpackBlocked = val
		case settingEnableConnectProtocol, settingH3Datagram:
			if val > 1 {
				// RFC 9220 §3 (by RFC 8441 §3's rule), RFC 9297 §2.1.1: the
				// value is 0 or 1.
				return ps, connErr(ErrCodeSettings, "boolean setting above 1")
			}
		}
	}
	return ps, nil
}

// appendSettingsFrame appends the server's SETTINGS frame: QPACK without a
// dynamic table (capacity 0 and no blocked streams, RFC 9204 §5: the peer's
// encoder then uses static and literal representations only), the maximum
// field section size the server accepts, and extended CONNECT when the server
// has a tunnel route (TransportEnv.ExtendedConnect).
func appendSettingsFrame(dst []byte, maxFieldSectionSize uint64, extendedConnect bool) []byte {
	var p []byte
	p = quicvarint.Append(p, settingQPACKMaxTableCapacity)
	p = quicvarint.Append(p, 0)
	p = quicvarint.Append(p, settingQPACKBlockedStreams)
	p = quicvarint.Append(p, 0)
	p = quicvarint.Append(p, settingMaxFieldSectionSize)
	p = quicvarint.Append(p, maxFieldSectionSize)
	if extendedConnect {
		// RFC 9220 §3: extended CONNECT (WebSocket over HTTP/3).
		p = quicvarint.Append(p, settingEnableConnectProtocol)
		p = quicvarint.Append(p, 1)
	}
	dst = appendFrameHeader(dst, frameSettings, uint64(len(p)))
	return append(dst, p...)
}
