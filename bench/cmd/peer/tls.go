package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"time"
)

// selfSigned makes a throwaway ECDSA P-256 certificate for 127.0.0.1 and
// localhost (the celeris demo's -tls-addr makes the same kind), so that
// every peer's handshake costs the same; the loader does not verify it.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "celeris-bench peer"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// tlsServer is a server that sets up TLS itself (net/http: ALPN h2 and
// http/1.1). The others are served on a crypto/tls listener offering
// http/1.1 only (fasthttp and fiber speak no HTTP/2).
type tlsServer interface {
	server
	serveTLS(ln net.Listener, cert tls.Certificate) error
}

// serveTLS serves srv over TLS on ln.
func serveTLS(srv server, ln net.Listener, cert tls.Certificate) error {
	if ts, ok := srv.(tlsServer); ok {
		return ts.serveTLS(ln, cert)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"http/1.1"}}
	return srv.serve(tls.NewListener(ln, cfg))
}
