package httpmsg

import "crypto/tls"

// TLSConn is implemented by a Conn that carries TLS (the std engine's TLS
// connections). The protocols copy its state into Request.TLS.
type TLSConn interface {
	// TLSConnectionState is the state after the handshake; it does not change
	// afterwards and must not be modified.
	TLSConnectionState() *tls.ConnectionState
}

// TLSState returns c's TLS state, or nil when c is not a TLS connection.
func TLSState(c Conn) *tls.ConnectionState {
	if t, ok := c.(TLSConn); ok {
		return t.TLSConnectionState()
	}
	return nil
}
