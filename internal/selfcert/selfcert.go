// Package selfcert makes self-signed TLS certificates for development and tests
// (the demo's HTTPS listener without -tls-cert, the TLS tests).
package selfcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"net"
	"time"
)

// Cert is a generated certificate with its key.
type Cert struct {
	TLS     tls.Certificate
	CertPEM []byte // the certificate, PEM
	KeyPEM  []byte // the ECDSA P-256 key, PEM (PKCS #8)
	// Fingerprint is the SHA-256 of the certificate's DER, in hex: what a
	// browser shows to compare before trusting it.
	Fingerprint string
}

// Pool returns a certificate pool that trusts c (for clients).
func (c *Cert) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.TLS.Leaf)
	return p
}

// New makes a self-signed certificate, valid for a year from an hour ago, for
// hosts: IP addresses and DNS names.
func New(hosts ...string) (*Cert, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"Celeris self-signed"}, CommonName: first(hosts)},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(der)
	return &Cert{
		TLS:         tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		CertPEM:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:      pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
		Fingerprint: hex.EncodeToString(sum[:]),
	}, nil
}

func first(s []string) string {
	if len(s) > 0 {
		return s[0]
	}
	return ""
}
