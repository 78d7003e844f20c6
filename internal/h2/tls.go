package h2

import "crypto/tls"

// RFC 9113 §9.2: HTTP/2 over TLS needs TLS 1.2 or later and, on TLS 1.2, none
// of the cipher suites of RFC 7540 Appendix A; otherwise the endpoint may treat
// it as a connection error INADEQUATE_SECURITY (§9.2.2). crypto/tls never
// renegotiates as a server and has no compression, as §9.2.1 asks. A connection
// below the minimum (possible only when the application's tls.Config allows
// one) gets GOAWAY INADEQUATE_SECURITY in place of the server preface and is
// closed, as with golang.org/x/net/http2.

// inadequateTLS is the reason of that connection error, also its debug data.
const inadequateTLS = "TLS version or cipher suite not allowed for HTTP/2 (RFC 9113 section 9.2)"

// tlsAdequate reports whether a TLS connection meets RFC 9113 §9.2.
func tlsAdequate(st *tls.ConnectionState) bool {
	switch {
	case st.Version >= tls.VersionTLS13:
		return true // every TLS 1.3 suite is an AEAD with ephemeral key exchange
	case st.Version < tls.VersionTLS12:
		return false
	}
	return cipherAllowed(st.CipherSuite)
}

// cipherAllowed reports whether a TLS 1.2 cipher suite is allowed for HTTP/2.
// RFC 9113 §9.2.2 forbids every suite of RFC 7540 Appendix A: all without
// ephemeral key exchange or without an AEAD. Of the suites crypto/tls
// implements, exactly these (ECDHE with AES-GCM or ChaCha20-Poly1305) are
// outside that list; all others (RSA key exchange, CBC, RC4, 3DES) are on it.
func cipherAllowed(id uint16) bool {
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
