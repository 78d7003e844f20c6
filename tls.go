package celeris

import (
	"crypto/tls"
	"errors"
	"net"
)

// StartTLS serves HTTPS on Config.Addr until Shutdown, as net/http's
// ListenAndServeTLS: certFile and keyFile are PEM files of the certificate chain
// and its key; both may be empty when Config.TLSConfig has Certificates or
// GetCertificate (autocert). HTTP/2 and HTTP/1.1 are chosen by ALPN. To serve
// plaintext and HTTPS at once, set Config.TLSAddr and call Start instead.
func (s *Server) StartTLS(certFile, keyFile string) error {
	return s.start(certFile, keyFile, true)
}

// TLSAddr is the address of the HTTPS listener of Config.TLSAddr, nil before the
// server is ready or without one.
func (s *Server) TLSAddr() net.Addr {
	s.mu.Lock()
	eng := s.tlsEng
	s.mu.Unlock()
	if eng == nil {
		return nil
	}
	return eng.Addr()
}

// tlsConfig is the TLS configuration of the server's TLS listener: a clone of
// Config.TLSConfig with the certificate files loaded and the HTTP/2 defaults.
func (s *Server) tlsConfig(certFile, keyFile string) (*tls.Config, error) {
	tc := &tls.Config{}
	if s.cfg.TLSConfig != nil {
		tc = s.cfg.TLSConfig.Clone()
	}
	if certFile == "" && keyFile == "" {
		certFile, keyFile = s.cfg.TLSCertFile, s.cfg.TLSKeyFile
	}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, errors.New("celeris: TLS certificate: " + err.Error())
		}
		tc.Certificates = append(tc.Certificates, cert)
	}
	if len(tc.Certificates) == 0 && tc.GetCertificate == nil && tc.GetConfigForClient == nil {
		return nil, errors.New("celeris: TLS needs a certificate: Config.TLSCertFile and TLSKeyFile, or Config.TLSConfig with Certificates or GetCertificate")
	}
	if tc.MinVersion == 0 {
		tc.MinVersion = tls.VersionTLS12 // RFC 9113 §9.2
	}
	if len(tc.NextProtos) == 0 {
		tc.NextProtos = []string{"h2", "http/1.1"}
	}
	return tc, nil
}

// TLS returns the TLS state of the request's connection (version, cipher suite,
// the ALPN protocol, the SNI server name, the client's certificates), or nil over
// plaintext. Every request of the connection shares it: read only.
func (c *Context) TLS() *tls.ConnectionState { return c.req.TLS }
