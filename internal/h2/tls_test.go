package h2

import (
	"bytes"
	"crypto/tls"
	"slices"
	"testing"
)

// cipherAllowed allows exactly the TLS 1.2 suites of crypto/tls outside RFC 7540
// Appendix A (ECDHE with an AEAD).
func TestCipherAllowed(t *testing.T) {
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		if !slices.Contains(s.SupportedVersions, tls.VersionTLS12) {
			continue
		}
		aead := bytes.Contains([]byte(s.Name), []byte("_GCM_")) || bytes.Contains([]byte(s.Name), []byte("CHACHA20"))
		want := bytes.HasPrefix([]byte(s.Name), []byte("TLS_ECDHE_")) && aead
		if got := cipherAllowed(s.ID); got != want {
			t.Errorf("%s: %v, want %v", s.Name, got, want)
		}
	}
	if !tlsAdequate(&tls.ConnectionState{Version: tls.VersionTLS13, CipherSuite: tls.TLS_AES_128_GCM_SHA256}) {
		t.Error("TLS 1.3 refused")
	}
	if tlsAdequate(&tls.ConnectionState{Version: tls.VersionTLS11, CipherSuite: tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}) {
		t.Error("TLS 1.1 allowed")
	}
}
