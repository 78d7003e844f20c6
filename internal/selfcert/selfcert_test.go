package selfcert

import (
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"testing"
)

// The certificate verifies for its hosts (and no other), its PEM forms load as a
// key pair, and the fingerprint is the SHA-256 of its DER.
func TestNew(t *testing.T) {
	c, err := New("localhost", "127.0.0.1", "::1")
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := c.TLS.Leaf.Verify(x509.VerifyOptions{DNSName: h, Roots: c.Pool()}); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	if _, err := c.TLS.Leaf.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: c.Pool()}); err == nil {
		t.Error("verifies for example.com")
	}
	pair, err := tls.X509KeyPair(c.CertPEM, c.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pair.Certificate[0])
	if c.Fingerprint != hex.EncodeToString(sum[:]) {
		t.Errorf("fingerprint %s", c.Fingerprint)
	}
}
