package stdengine

import (
	"crypto/tls"
	"errors"
	"io"
	"time"
)

// handshake runs the TLS handshake under Config.HandshakeTimeout and has the
// protocol chosen by ALPN (protoselect.Protocols.Choose). It reports false when
// the connection is to be closed. A failed handshake is not logged: any client
// can cause one per connection (a scanner, a plaintext client, a port check),
// and a log line each would let it fill the log.
func (c *conn) handshake() bool {
	tc := c.nc.(*tls.Conn)
	cfg := &c.eng.cfg
	// The deadline bounds the whole handshake: a client that connects and sends
	// nothing, or a ClientHello a byte at a time (slowloris), is closed.
	_ = c.raw.SetDeadline(time.Now().Add(cfg.HandshakeTimeout))
	if err := tc.Handshake(); err != nil {
		if f := cfg.HandshakeFailed; f != nil && !c.aborted.Load() {
			f()
		}
		var re tls.RecordHeaderError
		if errors.As(err, &re) && re.Conn != nil && looksLikeHTTP(re.RecordHeader) {
			// As net/http: a plaintext HTTP request on the TLS port gets a
			// readable answer instead of a reset.
			_ = re.Conn.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(re.Conn, "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n")
		}
		return false
	}
	_ = c.raw.SetDeadline(time.Time{})
	st := tc.ConnectionState()
	c.tls = &st
	c.core.Negotiated() // by ALPN: c is an httpmsg.TLSConn now
	return true
}

// looksLikeHTTP reports whether a TLS record header is the start of a plaintext
// HTTP request (as net/http tells them apart).
func looksLikeHTTP(hdr [5]byte) bool {
	switch string(hdr[:]) {
	case "GET /", "HEAD ", "POST ", "PUT /", "OPTIO":
		return true
	}
	return false
}
