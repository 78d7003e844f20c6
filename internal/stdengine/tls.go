package stdengine

import (
	"crypto/tls"
	"errors"
	"io"
	"time"
)

// handshake runs the TLS handshake under Config.HandshakeTimeout and picks the
// protocol by ALPN (RFC 7301): "h2" selects HTTP/2 at once (RFC 9113 §3.2: the
// client preface follows the handshake), anything else HTTP/1.1, which never
// honours Upgrade: h2c over TLS (Config.NewH1 of a TLS engine is built without
// it). It reports false when the connection is to be closed. A failed handshake is
// not logged: any client can cause one per connection (a scanner, a plaintext
// client, a port check), and a log line each would let it fill the log.
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
	if st.NegotiatedProtocol == "h2" && cfg.NewH2 != nil {
		if !h2Secure(&st) {
			// RFC 9113 §9.2: TLS 1.2 or later, and none of the cipher suites of
			// its Appendix A; otherwise a connection error INADEQUATE_SECURITY.
			if f := cfg.InadequateSecurity; f != nil {
				_ = c.raw.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = tc.Write(f())
			}
			_ = tc.Close()
			return false
		}
		c.proto = cfg.NewH2(c)
		return true
	}
	c.proto = cfg.NewH1(c)
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

// h2Secure reports whether a TLS connection meets RFC 9113 §9.2.
func h2Secure(st *tls.ConnectionState) bool {
	switch {
	case st.Version >= tls.VersionTLS13:
		return true // every TLS 1.3 suite is an AEAD with ephemeral key exchange
	case st.Version < tls.VersionTLS12:
		return false
	}
	return h2Cipher(st.CipherSuite)
}

// h2Cipher reports whether a TLS 1.2 cipher suite is allowed for HTTP/2. RFC 9113
// §9.2.2 forbids every suite of RFC 7540 Appendix A: all without ephemeral key
// exchange or without an AEAD. Of the suites crypto/tls implements, exactly these
// (ECDHE with AES-GCM or ChaCha20-Poly1305) are outside that list; all others
// (RSA key exchange, CBC, RC4, 3DES) are on it.
func h2Cipher(id uint16) bool {
	switch id {
	case tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
		tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
		tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:
		return true
	}
	return false
}
