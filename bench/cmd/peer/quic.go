package main

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"

	"github.com/quic-go/quic-go/http3"
)

// quicServer is quic-go's HTTP/3 server (http3.Server) serving the nethttp
// routes through net/http, on UDP at the -addr port with a self-signed
// certificate: the h3 peer of the celeris demo's HTTP/3.
type quicServer struct {
	srv *http3.Server
}

func newQuicServer() server {
	return &quicServer{srv: &http3.Server{Handler: nethttpHandler()}}
}

func (s *quicServer) serve(net.Listener) error {
	return errors.New("quicgo listens on UDP itself")
}

func (s *quicServer) listenAndServe(addr string) error {
	cert, err := selfSigned()
	if err != nil {
		return err
	}
	s.srv.Addr = addr
	s.srv.TLSConfig = http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert}})
	if err := s.srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, net.ErrClosed) {
		return err
	}
	return nil
}

func (s *quicServer) shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }
